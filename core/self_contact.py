"""Self-contact rules: which vertices of a mesh are inside another part of the same mesh (the
inside of a bending elbow, a belly fold), and the push that takes each out by its share.

Pure numpy: the rays are cast by the caller (Blender's Geometry Nodes in the add-on, exact
shapes in the tests) against the mesh's own surface as the frame shows it. Each vertex casts
two rays along its own outward normal ``n``, both started a little off the surface (``offset``)
so they never meet the faces around the vertex itself:

- **out**, from ``p + offset n`` along ``n``. A surface that does not pass through itself
  is met from the front there (the ray enters another part: a gap) or not at all. A first
  face met from behind (the ray *leaves* a volume) means the vertex is inside another part.
- **in**, from ``p - offset n`` along ``-n``. For a vertex inside another part, the first
  face behind it is that part's face it crossed: how deep it is in. Or it is the mesh's own
  far wall, when the vertex is less than ``offset`` in (the ray starts out of the part) or
  deeper than its own part is thick: a depth above ``cap`` (half the vertex's thickness at
  rest) is that wall, not a depth, and the vertex only touches.

Both sides of a fold are inside each other, so each takes ``share`` (half) of its depth, as
two soft partners of equal stiffness: pushed back along ``-n``, they meet between. What the
step leaves is asked again and taken the same way (``core.frame``'s rounds).

An open sheet folded onto itself has no inside: while its halves approach, their rays meet
each other from the front (a gap); once one half has passed through the other, its rays meet
nothing from behind, and nothing is pushed. Self-contact holds closed meshes, and open ones
that enclose a volume along the normals (a tube without caps).
"""

import numpy as np

#: The rays start this fraction of the mesh's size off the surface: past the rounding of the
#: faces around the vertex, far below what contact must hold (1e-3 of the size).
OFFSET = 1e-5
#: A vertex this fraction of the mesh's size from another part (or less than ``OFFSET`` into
#: it) touches it: it rests there, and its offsets do not relax into it.
TOUCH = 2e-4
#: Each side of a fold takes this share of the depth (equal stiffness: half each).
SHARE = 0.5


def rays(positions: np.ndarray, normals: np.ndarray, offset: float) -> tuple[np.ndarray, np.ndarray]:
    """The two rays of every vertex, out then in: origins and unit directions, (2n, 3) each."""
    out = positions + offset * normals
    back = positions - offset * normals
    return np.concatenate([out, back]), np.concatenate([normals, -normals])


def thickness(inward: np.ndarray, offset: float) -> np.ndarray:
    """Each vertex's thickness at rest (n,): how far its in ray (signed distances, nan where
    it met nothing) goes before it leaves the mesh; infinite where it never does (a sheet)."""
    return np.where(inward > 0, inward + offset, np.inf)


def pushes(
    normals: np.ndarray,
    outward: np.ndarray,
    inward: np.ndarray,
    offset: float,
    cap: np.ndarray,
    touch: float,
    share: float = SHARE,
    step: np.ndarray | float = np.inf,
) -> tuple[np.ndarray, np.ndarray]:
    """The pushes (n, 3) out of the mesh's other parts and the touching flags (n,), from each
    vertex's unit outward ``normals`` (n, 3) and the signed distances its out and in rays met
    (n,) each: positive where the face met faces along the ray (the ray leaves a volume),
    negative where it faces against it, nan where nothing was met. ``cap`` (n,): the deepest
    a vertex is taken to be (deeper: its in ray met its own far wall). ``touch``: the gap
    within which a vertex touches. ``step`` (n,): the furthest a vertex is pushed at once;
    a deeper one is taken in over several questions (a crease the bend crumples turns its
    normals, and its rays read depths that would throw it across the mesh)."""
    with np.errstate(invalid="ignore"):  # nan compares False: a ray that met nothing
        inside = outward > 0
        depth = inward + offset
        pushed = inside & (inward > 0) & (depth <= cap)
        depth = np.minimum(depth, step)
        near = (outward <= 0) & (offset - outward <= touch)  # a gap of offset + |outward|
    push = np.where(pushed[:, None], normals * -(share * np.where(pushed, depth, 0.0))[:, None], 0.0)
    touching = (inside & ~pushed) | near
    return push.astype(normals.dtype, copy=False), touching
