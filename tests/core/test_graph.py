"""The hierarchy build's graph pieces against plain reference implementations: the faster
forms must give the same arrays, element for element, or the hierarchy (and every frame the
solver plays on it) would change."""

import itertools

import numpy as np
import pytest

from core.graph import (
    components,
    group_starts,
    independent_set,
    radix_argsort,
    sort_with_order,
    sorted_by_groups,
    stable_argsort,
    symmetric_graph,
    symmetric_graph_of,
)
from core.mesh import _coarse_graph, _triangles


def random_graph(rng, count: int, pairs: int):
    """Random pairs (with self loops and repeats) and the symmetric graph they make."""
    first, second = rng.integers(0, count, pairs), rng.integers(0, count, pairs)
    return first, second, symmetric_graph(count, first, second)


@pytest.mark.parametrize("seed", range(5))
def test_sorting_packed_keys_gives_the_stable_argsort(seed):
    rng = np.random.default_rng(seed)
    for keys in (
        rng.integers(0, 50, 1000),  # many repeats: ties keep their order
        rng.integers(0, 2**40, 1000),
        rng.integers(-5, 5, 100),  # negative: the indirect sort
        np.array([2**62, 1, 2**62, 0]),  # too large to pack: the indirect sort
        rng.integers(0, 3, 0),
        rng.integers(0, 7, 300).astype(np.int32),
    ):
        ordered, order = sort_with_order(keys)
        assert np.array_equal(order, np.argsort(keys, kind="stable"))
        assert np.array_equal(ordered, np.sort(keys, kind="stable"))
        assert ordered.dtype == keys.dtype
        assert np.array_equal(stable_argsort(keys), order)


@pytest.mark.parametrize("seed", range(5))
def test_the_symmetric_graph_is_every_pair_both_ways_once_sorted(seed):
    rng = np.random.default_rng(seed)
    count = int(rng.integers(1, 80))
    first, second, (heads, tails) = random_graph(rng, count, int(rng.integers(0, 300)))
    expected = sorted(
        {(a, b) for a, b in zip(first.tolist(), second.tolist(), strict=True) if a != b}
        | {(b, a) for a, b in zip(first.tolist(), second.tolist(), strict=True) if a != b}
    )
    assert list(zip(heads.tolist(), tails.tolist(), strict=True)) == expected
    assert heads.dtype == tails.dtype == np.int64


@pytest.mark.parametrize("seed", range(3))
def test_radix_and_grouped_sorts_give_what_numpy_sorts_give(seed):
    rng = np.random.default_rng(seed)
    for largest in (0, 7, 2**16 - 1, 2**16, 2**20, 2**32 - 1):  # one pass, two passes
        keys = rng.integers(0, largest + 1, 3000)
        keys[:2] = largest
        assert np.array_equal(radix_argsort(keys, largest), np.argsort(keys, kind="stable"))
        assert np.array_equal(stable_argsort(keys), np.argsort(keys, kind="stable"))
        assert np.array_equal(group_starts(keys % 50, 60), np.searchsorted(np.sort(keys % 50), np.arange(61)))
    for key_bits in (1, 12, 16, 17, 40):  # within the groups' 16 bits, or beyond
        keys = rng.integers(0, 2**key_bits, 5000)
        assert np.array_equal(sorted_by_groups(keys, key_bits), np.sort(keys))


@pytest.mark.parametrize("seed", range(3))
def test_the_symmetric_graph_of_pieces_or_blocks_is_that_of_all_the_pairs(seed):
    rng = np.random.default_rng(seed)
    count = int(rng.integers(2, 5000))
    first, second, (heads, tails) = random_graph(rng, count, 3 * count)
    cut = [0, count // 3, count, 3 * count]
    pieces = [(first[a:b], second[a:b]) for a, b in itertools.pairwise(cut)]
    for graph in (symmetric_graph_of(count, pieces), symmetric_graph_of(count, iter(pieces), first.size)):
        assert np.array_equal(graph[0], heads) and np.array_equal(graph[1], tails)


def reference_components(count: int, heads, tails) -> np.ndarray:
    parent = list(range(count))

    def root(v):
        while parent[v] != v:
            v = parent[v]
        return v

    for a, b in zip(heads.tolist(), tails.tolist(), strict=True):
        ra, rb = root(a), root(b)
        parent[max(ra, rb)] = min(ra, rb)
    return np.array([root(v) for v in range(count)])


def reference_independent_set(count: int, heads, tails) -> np.ndarray:
    """Luby's rounds as first written (every edge every round)."""
    index = np.arange(count, dtype=np.uint64)
    scrambled = (index * np.uint64(2654435761) + np.uint64(12345)) % np.uint64(2**32)
    priority = scrambled.astype(np.int64) * count + index.astype(np.int64)
    chosen = np.zeros(count, dtype=bool)
    open_ = np.ones(count, dtype=bool)
    while open_.any():
        live = open_[heads] & open_[tails]
        best = np.full(count, -1, dtype=np.int64)
        np.maximum.at(best, heads[live], priority[tails[live]])
        pick = open_ & (priority > best)
        chosen |= pick
        open_ &= ~pick
        open_[tails[pick[heads]]] = False
    return chosen


@pytest.mark.parametrize("seed", range(20))
def test_islands_and_independent_sets_match_the_plain_algorithms(seed):
    rng = np.random.default_rng(seed)
    count = int(rng.integers(1, 120))
    _first, _second, (heads, tails) = random_graph(rng, count, int(rng.integers(0, 2 * count)))
    assert np.array_equal(components(count, heads, tails), reference_components(count, heads, tails))
    assert np.array_equal(independent_set(count, heads, tails), reference_independent_set(count, heads, tails))


@pytest.mark.parametrize("seed", range(10))
def test_triangles_are_every_three_clique_in_order(seed):
    rng = np.random.default_rng(seed)
    count = int(rng.integers(3, 40))
    _first, _second, (heads, tails) = random_graph(rng, count, int(rng.integers(0, 6 * count)))
    edges = set(zip(heads.tolist(), tails.tolist(), strict=True))
    expected = [
        (a, b, c)
        for a, b, c in itertools.combinations(range(count), 3)
        if (a, b) in edges and (b, c) in edges and (a, c) in edges
    ]
    assert [tuple(t) for t in _triangles(count, heads, tails).tolist()] == expected


@pytest.mark.parametrize("seed", range(10))
def test_the_coarse_graph_links_the_kept_vertices_next_to_one_vertex_or_one_edge(seed):
    rng = np.random.default_rng(seed)
    count = int(rng.integers(2, 80))
    _first, _second, (heads, tails) = random_graph(rng, count, int(rng.integers(0, 4 * count)))
    keep = independent_set(count, heads, tails)
    keep |= rng.random(count) < 0.1  # kept neighbours too, as a small island keeps all
    coarse_index = np.full(count, -1)
    coarse_index[keep] = np.arange(int(keep.sum()))
    neighbours = [set() for _ in range(count)]
    for a, b in zip(heads.tolist(), tails.tolist(), strict=True):
        neighbours[a].add(b)
    adjacent = [{v} if keep[v] else {u for u in neighbours[v] if keep[u]} for v in range(count)]
    pairs = set()
    for a in range(count):
        for b in neighbours[a] | {a}:
            pairs |= {(coarse_index[p], coarse_index[q]) for p in adjacent[a] for q in adjacent[b] if p != q}
    coarse_heads, coarse_tails = _coarse_graph(keep, coarse_index, heads, tails)
    assert list(zip(coarse_heads.tolist(), coarse_tails.tolist(), strict=True)) == sorted(pairs)
