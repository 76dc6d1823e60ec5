"""Responding meshes soft against each other: two enabled meshes that list each other as
colliders dent each other, each by its share of their overlap (``core.together``).

Such meshes (and any soft against them, in turn) form a group, stepped together: one frame
of the group steps every member at once, each asking about the others' surfaces as the
frame found them (their response keys hold the solver's positions before any query), so the
result does not depend on which member Blender's frame change reaches first. Their
simulations are built, dropped and cached together: a change to one restarts them all.
"""

import time
from contextlib import ExitStack

import numpy as np

from ..core.contact import HOLD_TOLERANCE
from ..core.pressure import pressure as pressure_of
from ..core.together import advance_together
from . import animated, mesh_data, posed, simulation, structure
from .rounds import Faces, rows_to_ask

# By the group's members' session ids (sorted): the simulations stepped together last, so a
# member rebuilt alone (its settings changed) restarts the others.
_joined: dict[tuple[int, ...], list] = {}
# By the same ids: the members' faces (read when the group was joined), for ``rounds``.
_faces: dict[tuple[int, ...], list[Faces]] = {}


def _responds(obj) -> bool:
    return obj is not None and getattr(obj, "type", None) == "MESH" and obj.collision_response.enabled


def _lists(obj, other) -> bool:
    return any(candidate == other for candidate in structure.plain_colliders(obj))


def partners(obj) -> list:
    """The enabled meshes ``obj`` is soft against: those among its colliders that respond and
    list it back (by name order)."""
    if not _responds(obj):
        return []
    found = {o.name: o for o in structure.plain_colliders(obj) if _responds(o) and o != obj and _lists(o, obj)}
    return [found[name] for name in sorted(found)]


def share(obj, other) -> float:
    """The share of their overlap ``obj`` takes against ``other``: the other's stiffness over
    both (the stiffer takes less)."""
    mine, theirs = obj.collision_response.stiffness, other.collision_response.stiffness
    return theirs / (mine + theirs)


def problems(obj) -> list[str]:
    """Colliders that look meant to be soft against ``obj`` and are not, for the panel."""
    found = []
    for other in structure.plain_colliders(obj):
        if other is None or other == obj or getattr(other, "type", None) != "MESH":
            continue
        if _responds(other) and not _lists(other, obj):
            found.append(
                f"'{other.name}' responds too but does not list '{obj.name}': it does not give way to it "
                "(Soft Against Each Other makes both)"
            )
        elif not _responds(other) and _lists(other, obj) and other.collision_response.curves is not None:
            found.append(f"'{other.name}' lists '{obj.name}' but is not enabled: it does not give way to it")
    return found


def group(obj) -> list:
    """``obj`` and every mesh soft against it, in turn, by name order."""
    members = {obj.name: obj}
    todo = [obj]
    while todo:
        for other in partners(todo.pop()):
            if other.name not in members:
                members[other.name] = other
                todo.append(other)
    return [members[name] for name in sorted(members)]


def positions_at(obj, scene, frame: int, depsgraph) -> np.ndarray:
    """``obj``'s response at ``frame``, simulating its whole group forward when needed (see
    ``simulation.positions_at``)."""
    members = group(obj)
    for member in members:
        simulation.check(member)
        simulation.check_transform(member)
    sims = _simulations(members, scene)
    mine = sims[members.index(obj)]
    return simulation.play_to(obj, mine, scene, frame, lambda current: _step(members, sims, scene, current, depsgraph))


def _simulations(members: list, scene) -> list:
    """The members' simulations, all built again unless each is the one last stepped with
    the others (a member changed alone restarts them all). They start at the earliest of
    their start frames."""
    key = tuple(sorted(member.session_uid for member in members))
    sims = [simulation.built(member, scene) for member in members]
    joined = _joined.get(key)
    if joined is None or len(joined) != len(sims) or any(a is not b for a, b in zip(joined, sims, strict=True)):
        for member in members:
            simulation.invalidate(member)
        sims = [simulation.built(member, scene) for member in members]
        start = min(sim.start for sim in sims)
        for sim in sims:
            sim.start, sim.head, sim.at = start, start - 1, start - 1
            sim.replays = False  # every frame kept, none let go of: a group keeps no state to simulate from
            sim.query.fresh_colliders = True  # its partners move between a frame's queries
        _joined[key] = sims
        _faces[key] = [Faces(*mesh_data.topology(member.data)[:2]) for member in members]
    return sims


def _radius(rest: np.ndarray) -> float:
    """Half the diagonal of the box around ``rest`` (n, 3): its size, as tolerances take it."""
    return float(np.linalg.norm([np.ptp(rest[:, axis]) for axis in range(3)])) / 2


def _step(members: list, sims: list, scene, frame: int, depsgraph) -> None:
    """Simulate ``frame`` (the scene is at it) for every member at once."""
    started = time.perf_counter()
    for member, sim in zip(members, sims, strict=True):
        animated.read_per_frame(member.collision_response, sim.surface.settings)
    fps = scene.render.fps / scene.render.fps_base
    state = {"whole": False}
    # The share each member takes of a push out of each of its partners, by partner name.
    shares = [{other.name: share(member, other) for other in partners(member)} for member in members]

    def weigher(index: int):
        def weigh(contact) -> None:
            if state["whole"]:
                return
            for source, name in enumerate(contact.sources):
                if name in shares[index]:
                    rows = contact.source == source
                    contact.displacement[rows] *= np.float32(shares[index][name])

        return weigh

    with ExitStack() as stack:
        finds = [
            stack.enter_context(simulation.finder(member, sim, scene, depsgraph, weigher(i)))
            for i, (member, sim) in enumerate(zip(members, sims, strict=True))
        ]

        faces = _faces[tuple(sorted(member.session_uid for member in members))]
        matrices = [np.array(member.matrix_world, dtype=np.float64) for member in members]
        # A round after a round asks only near the contact (``rounds``); on a posed member a
        # move in rest space is not one on the surface the partners meet: every vertex.
        narrow = not any(posed.is_posed(member) for member in members)
        last: dict = {}  # the last question: the positions asked about, what it found, whether a round asked it

        def ask(positions: list[np.ndarray], whole: bool | None):
            for member, shown in zip(members, positions, strict=True):
                simulation.show(member, shown)
            depsgraph.update()  # every member as shown, before any query reads one
            state["whole"] = bool(whole)
            after_round = narrow and last.get("round", False)
            found = []
            for index, (find, shown) in enumerate(zip(finds, positions, strict=True)):
                if whole is None:
                    among = None
                elif after_round:
                    among = rows_to_ask(index, positions, last["positions"], last["found"], faces, matrices)
                else:  # after the step, which can move any vertex
                    among = np.arange(shown.shape[0])
                found.append(find(shown, among, np.inf))
            last.update(positions=positions, found=found, round=whole is not None)
            return found

        if frame > sims[0].start:
            # An overlap left within 1e-3 of a member's size (the contact's tolerance) is closed
            # by the next, whole round: the members end no further apart than that.
            close = [HOLD_TOLERANCE * _radius(sim.rest) for sim in sims]
            advance_together([sim.surface for sim in sims], ask, 1.0 / fps, close=close)
        else:  # the start frame is the rest shape: it only shows the colliders to the queries
            ask([sim.surface.positions for sim in sims], None)
        # What a member kept out of itself shows (``simulation.kept_out_of_itself``); its partners
        # meet its solver's positions, as they meet the others'.
        shown = [
            sim.surface.positions
            if sim.self_contact is None
            else simulation.kept_out_of_itself(member, sim, sim.surface.positions, depsgraph)
            for member, sim in zip(members, sims, strict=True)
        ]
    seconds = time.perf_counter() - started
    for member, sim, positions in zip(members, sims, shown, strict=True):
        sim.frames.keep(frame, positions)  # every frame kept: a group is not simulated again
        sim.last = positions
        if sim.pressure is not None:  # (secondary motion is not followed in a group)
            sim.pressures.keep(frame, pressure_of(sim.surface, sim.pressure, sim.normals))
        sim.head = sim.at = frame
        sim.frame_seconds = seconds
        mesh_data.write_shape_key(member, sim.frames.get(frame))  # shown: the next frame asks from here
