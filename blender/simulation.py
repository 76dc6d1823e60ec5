"""The response of a mesh over time: the registry of simulations (solver, collision query and
the frames already played) and the pipeline that builds and steps them.

One ``Simulation`` per enabled mesh object, kept in memory (not saved). It simulates only
forward: the solver's state is kept at the last simulated frame (the head), and the
positions of every frame played are cached, so scrubbing back shows cached frames, and a
frame past the head is reached by simulating forward from it. The shape at a frame is
therefore the same whatever path of scrubbing led there. The frames are kept as the rows
that changed (``core.played``): memory grows with what moves, not with the mesh. While a
collider presses, the response moves nearly every vertex a little and a frame costs a whole
copy, so what the played frames hold is kept within a budget (the add-on's preference,
``blender.preferences``): the whole state of the simulation is kept every ``STATE_EVERY``
frames (``core.checkpoints``, only what changed since the last), and past the budget frames
are let go of (``core.budget``: those holding much, furthest from the frame shown) and
simulated again from the nearest state before them when shown (the step is deterministic:
the same bits). Any change of a setting, a collider or the mesh drops the simulation; the
next frame restarts it at the start frame.
"""

import time
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field

import bpy
import numpy as np

from ..core import HierarchyCache, Surface, VertexNormals, budget
from ..core.checkpoints import State, States
from ..core.folds import FoldGuard
from ..core.frame import Found, advance, shown
from ..core.grid import GridHierarchy
from ..core.mesh import MeshHierarchy
from ..core.overshoot import Overshoot
from ..core.played import NotKept, PlayedFrames
from ..core.pressure import PressureSettings
from ..core.pressure import pressure as pressure_of
from ..core.self_contact import Faces
from ..core.vectors import nonzero_rows, unit_rows
from ..core.volume import Shortfall, Volume
from . import animated, curves, guard, mesh_data, posed, preferences, pressure, structure, together
from . import volume as keep_volume
from .collision import CollisionQuery
from .collision import colliders as collider_shapes
from .self_contact import SelfContact

#: Meshes above this many vertices get a warning: the response still runs, slowly.
LARGE_MESH = 500_000

#: A jump that simulates more frames than this shows its progress (the cursor's counter).
PROGRESS_FRAMES = 10

#: Past the budget, played frames holding more than this share of a whole copy of the
#: positions are let go of first (``core.budget.fit``).
LARGE = 0.05

#: The simulation's whole state is kept every this many frames from the start: showing a
#: frame not kept simulates at most this many frames less one.
STATE_EVERY = 8

#: What a step reads and changes of a ``Simulation``: what a kept state holds.
STATE = (
    "surface",
    "query",
    "folds",
    "overshoot",
    "volume",
    "self_contact",
    "last",
    "unkept",
    "last_pressure",
    "pressure",
    "messages",
    "at",
)

_hierarchies = HierarchyCache()
# By the object's session id: renaming an object keeps its simulation (by name, a renamed
# object built a new one and left the old in memory).
_simulations: dict[int, "Simulation"] = {}


@dataclass
class Simulation:
    obj_name: str
    surface: Surface
    query: CollisionQuery
    fingerprint: tuple
    start: int
    head: int  # last simulated frame
    rest: np.ndarray  # (n, 3) the rest shape: what the response displaces vertices from
    normals: np.ndarray  # the rest shape's vertex normals: the pushes follow them
    folds: FoldGuard
    frames: PlayedFrames = field(default_factory=PlayedFrames)
    warnings: list[str] = field(default_factory=list)  # about the mesh, from when it was built
    messages: list[str] = field(default_factory=list)  # about the colliders, from the last step
    frame_seconds: float = 0.0  # what the last simulated frame cost
    overshoot: Overshoot | None = None  # secondary motion, when a level's damping ratio is below 1
    pressure: PressureSettings | None = None  # when the pressure attribute is written
    pressures: PlayedFrames = field(default_factory=PlayedFrames)  # each frame's, (n,) float32
    volume: Volume | None = None  # volume preservation, when on
    # The played frame that kept the least of the volume promised, and the Reach that would
    # hold it, (needed,) once asked (``blender.volume``).
    volume_shortfall: tuple[int, Shortfall] | None = None
    volume_advice: tuple[float | None] | None = None
    volume_kept: dict[int, float] = field(default_factory=dict)  # each short frame's share given back
    self_contact: SelfContact | None = None  # when the mesh is kept out of itself
    # The positions the last frame showed before the moves out of the mesh itself (with them,
    # ``last``): what an idle frame shows again, moved out of itself again.
    unkept: np.ndarray | None = None
    last: np.ndarray | None = None  # what the frame the solver's state is at showed (``at``)
    last_pressure: np.ndarray | None = None  # and its pressure
    at: int = 0  # the frame the solver's state is at: the head, or one simulated again
    states: dict[int, State] = field(default_factory=dict)  # the whole state every STATE_EVERY frames
    head_state: State | None = None  # the head's, while the solver's state is at another frame
    keeper: States | None = None  # makes and restores those
    # Whether frames played from now on may be let go of and simulated again when shown (off
    # for a bake, which plays each frame once and keeps it: no state is kept for it).
    replays: bool = True
    replayed: int = 0  # frames simulated again to be shown (none while the budget holds all)
    # What the states hold: (how many were counted, the copies counted by id, their bytes);
    # states are only added, so each is counted once (the panel asks at every redraw).
    _states_held: tuple[int, dict, int] = field(default_factory=lambda: (0, {}, 0))

    @property
    def states_nbytes(self) -> int:
        """Memory held by the states kept (each array counted once), in bytes."""
        counted, known, held = self._states_held
        if counted < len(self.states):
            added = list(self.states.values())[counted:]
            held += States.nbytes(added, known)
            self._states_held = (len(self.states), known, held)
        if self.head_state is not None:  # (made and let go of as the head is left and played on)
            held += States.nbytes([self.head_state], dict(known))
        return held

    @property
    def nbytes(self) -> int:
        """Memory held to show the frames played again: the frames and pressures kept and
        the states kept (each array counted once), in bytes."""
        return self.frames.nbytes + self.pressures.nbytes + self.states_nbytes

    def memory(self) -> str:
        """What the panel says of the memory the played frames hold, against the budget."""
        held = f"Played frames hold {self.nbytes / 2**20:.0f} of {preferences.budget_bytes() / 2**20:.0f} MB"
        dropped = self.frames.dropped()
        return f"{held}; {dropped} frames simulated again when shown" if dropped else held

    @property
    def shows_more(self) -> bool:
        """Whether the key can show more than the solver's state (overshoot, volume, the
        moves out of the mesh itself)."""
        return self.overshoot is not None or self.volume is not None or self.self_contact is not None

    def status(self) -> str:
        """What the panel says of it: the frames cached and what the last one cost."""
        if self.head < self.start:
            return "Nothing cached yet"
        cached = f"Cached frames {self.start}-{self.head}" if self.head > self.start else f"Cached frame {self.head}"
        return f"{cached}; the last took {self.frame_seconds * 1000:.0f} ms"


class Unusable(Exception):
    """The object cannot respond; the message says why, for the panel and reports."""


class SharedMesh(Unusable):
    """The mesh is another object's too (a linked duplicate, Alt+D): the response, a key of
    the mesh, would show on both, so neither responds until one is made single user."""


class LinkedMesh(Unusable):
    """A library override whose mesh is linked: no live response (its shape keys cannot be
    written), but a bake to a point cache works (see ``point_cache.editable_mesh``)."""


def invalidate(obj) -> None:
    """Drop the simulation of ``obj``: it restarts at the start frame on the next update."""
    _simulations.pop(obj.session_uid, None)


def invalidate_all() -> None:
    _simulations.clear()
    mesh_data.forget_written()


def get(obj) -> Simulation | None:
    return _simulations.get(obj.session_uid)


def check(obj) -> None:
    """Raise Unusable with a clear message if ``obj`` cannot respond."""
    if obj is None or obj.type != "MESH":
        raise Unusable("Collision Response works on mesh objects")
    mesh = obj.data
    if len(mesh.vertices) == 0:
        raise Unusable(f"'{obj.name}' has no vertices")
    if len(mesh.polygons) == 0:
        raise Unusable(f"'{obj.name}' has no faces: nothing to dent")
    if obj.library is None and obj.override_library is not None and mesh.library is not None:
        stale = (
            " (its asset file was saved with a dent in the response's key, shown in every frame here:"
            " disable the response there, or go to its start frame, and save it)"
            if mesh_data.saved_dent(mesh)
            else ""
        )
        raise LinkedMesh(
            f"'{obj.name}' is a library override whose mesh is linked: bake it to a point cache, "
            f"or make its mesh local for a live response{stale}"
        )
    if mesh.library is not None or (obj.library is not None and obj.override_library is None):
        raise Unusable(f"'{obj.name}' is linked from another file: its shape keys cannot be written")
    sharing = [o.name for o in bpy.data.objects if o.data == mesh and o != obj]
    if sharing:
        raise SharedMesh(
            f"'{obj.name}' shares its mesh '{mesh.name}' with {', '.join(repr(n) for n in sharing)} (a linked "
            "duplicate): the response is a shape key of the mesh, so they would all show one dent, and it does "
            "not respond. Make it single user (Object > Relation > Make Single User > Object & Data)"
        )
    check_transform(obj)


def check_transform(obj) -> None:
    """Raise Unusable if ``obj`` is scaled to nothing on some axis (the collisions are found
    in its object space, which then has no inverse)."""
    if abs(np.linalg.det(np.array(obj.matrix_world)[:3, :3])) < 1e-12:
        raise Unusable(f"'{obj.name}' has a scale of 0 on some axis: give it a size to respond")


def colliders(obj) -> list:
    """Every object the surface meets: its interior structure, its container, its colliders."""
    return structure.contact_objects(obj)[0]


def present_colliders(obj) -> tuple[list, list[str]]:
    """The objects of ``colliders`` still in a scene, and a message for each other: deleted
    (Object > Delete leaves it in the file while a list holds it), it meets nothing, live or
    baked (a bake counted it and wrote every frame unchanged)."""
    present, missing = [], []
    for other in colliders(obj):
        if other is None:
            continue
        if collider_shapes.unlinked(other):
            missing.append(f"'{other.name}' was deleted: remove it from the list")
        else:
            present.append(other)
    return present, missing


def hierarchy(obj):
    """The object's hierarchy (built once per topology and rest shape)."""
    return _hierarchies.get(mesh_data.rest_positions(obj), *mesh_data.topology(obj.data))


def level_count(obj) -> int:
    """How many levels the object's mesh has, coarse to fine."""
    return len(hierarchy(obj).sizes)


def _behaviour_maps(obj) -> dict[str, np.ndarray]:
    """Vertex-group weights per property, for the properties that name a group."""
    settings = obj.collision_response
    maps = {}
    for name in curves.MAPPED:
        group = obj.vertex_groups.get(getattr(settings, f"{name}_group"))
        if group is not None:
            maps[name] = mesh_data.group_weights(obj, group)
    return maps


def fingerprint(obj, scene, level_count: int) -> tuple:
    """What the response depends on apart from time: settings, curves, colliders, mesh, the
    scene and its frame rate (a frame's step is a frame's time: played again at 60 fps what
    was played at 24 showed and baked the 24 fps response)."""
    settings = obj.collision_response
    mesh = obj.data
    # Those read every frame count by their F-curve when animated (animated.input_fingerprint).
    plain = (settings.start_frame, settings.recovers, animated.input_fingerprint(obj), settings.self_contact)
    groups = tuple(getattr(settings, f"{name}_group") for name in curves.MAPPED)
    met, kinds = structure.contact_objects(obj)
    # Which of them the query takes (``collision.colliders.usable_colliders``): a collider
    # deleted (the list keeps it in the file, unlinked) or hidden is ignored; shown again, or
    # hidden while played frames showed it pressing, the response restarts.
    present = tuple(o is not None and not (collider_shapes.unlinked(o) or collider_shapes.hidden(o)) for o in met)
    collider_names = (tuple(o.name if o else None for o in met), tuple(kinds), settings.stiffness, present)
    topology = (len(mesh.vertices), len(mesh.edges), len(mesh.polygons))
    # What deforms it: adding an armature or a shape key changes the posed surface.
    deformed = (
        tuple((m.name, m.type, m.show_viewport) for m in obj.modifiers),
        obj.parent_type if obj.parent else None,
        posed.is_posed(obj),
    )
    drawn = curves.curve_fingerprint(settings, level_count)
    # The scene it plays in too: its collision query's helper is linked into that scene (a
    # linked copy of the scene shares the object, and its frames raised a traceback).
    timing = (scene.session_uid, scene.render.fps, scene.render.fps_base)
    return (plain, groups, collider_names, topology, deformed, drawn, timing)


def _build(obj, scene) -> Simulation:
    check(obj)
    settings = obj.collision_response
    rest = mesh_data.rest_positions(obj)
    topology = mesh_data.topology(obj.data)
    hierarchy = _hierarchies.get(rest, *topology)
    level_count = len(hierarchy.sizes)
    size = float(np.linalg.norm(np.ptp(rest, axis=0))) or 1.0
    coefficients = curves.level_settings(settings, level_count, size)
    coefficients.maps = _behaviour_maps(obj)
    if "yield_limit" in coefficients.maps:
        # A Yield Map scales the curve's fraction of the object's size; at the top, "never",
        # that is the size itself (no offset reaches it), so a weight below 1 scales it too.
        coefficients.yield_limit = np.minimum(coefficients.yield_limit, size)
    surface = Surface(hierarchy, rest, coefficients)
    start = settings.start_frame
    vertex_normals = VertexNormals(len(rest), *topology[:2])
    normals = vertex_normals(rest, np.arange(len(rest)))
    query = CollisionQuery(scene, obj.name, vertex_normals, size / 2)
    folds = FoldGuard(rest, *topology[:2], normals)
    simulation = Simulation(
        obj.name,
        surface,
        query,
        fingerprint(obj, scene, level_count),
        start,
        start - 1,
        rest,
        normals,
        folds,
        at=start - 1,
    )
    period, ratio = coefficients.overshoot_period, coefficients.damping_ratio
    if period is not None and ratio is not None and Overshoot.wanted(ratio):
        simulation.overshoot = Overshoot(surface, period, ratio, folds)
    if settings.pressure:
        simulation.pressure = animated.pressure_settings(settings)
    if settings.volume:  # the reach in the scene, measured under the object's transform
        simulation.volume = Volume(rest, *topology[:2], normals, settings.volume_reach)
    if settings.self_contact:
        simulation.self_contact = SelfContact(scene, obj, rest, *topology[:2])
    if len(rest) > LARGE_MESH:
        simulation.warnings.append(f"'{obj.name}' has {len(rest):,} vertices: the response will be slow")
    for modifier in obj.modifiers:  # not followed: the colliders meet the mesh without it
        if modifier.type == "NODES" and modifier.show_viewport:
            simulation.warnings.append(
                f"Geometry Nodes '{modifier.name}' is not followed: the colliders meet the mesh "
                "without it (apply it, or use it only for what does not move the surface)"
            )
    return simulation


def update_object(obj, scene, depsgraph: bpy.types.Depsgraph) -> list[str]:
    """Show ``obj``'s response at the scene's frame, simulated in ``depsgraph`` (the view
    layer's evaluated one). Returns messages (empty when fine)."""
    with guard.busy():
        try:
            positions = positions_at(obj, scene, scene.frame_current, depsgraph)
        except SharedMesh as problem:
            # Its key at rest, not the dent of the frame shown when the mesh came to be shared
            # (a linked duplicate made there showed that dent in every frame, on both).
            if mesh_data.is_own_live_key(obj):
                mesh_data.write_shape_key(obj, mesh_data.rest_positions(obj))
            return [str(problem)]
        except Unusable as problem:
            return [str(problem)]
        mesh_data.write_shape_key(obj, positions)
        state = get(obj)
        if state is not None and (state.pressure is not None or pressure.is_written(obj)):  # (off: removed)
            shown = pressure_at(state, scene.frame_current) if state.pressure is not None else None
            pressure.write(obj, shown, obj.collision_response.pressure_color)
    state = get(obj)
    return state.warnings + state.messages if state else []


def positions_at(obj, scene, frame: int, depsgraph: bpy.types.Depsgraph) -> np.ndarray:
    """The mesh's response at ``frame`` (object space, (n, 3) float32), simulating forward
    from the head when needed (bringing the scene to each frame between in turn).
    ``depsgraph``: the view layer's evaluated one; ``scene.frame_set`` evaluates that same
    depsgraph at each frame, so it stays the one to read."""
    check_transform(obj)
    if together.partners(obj):  # soft against other responding meshes: stepped with them
        return together.positions_at(obj, scene, frame, depsgraph)
    simulation = built(obj, scene)
    return play_to(
        obj,
        simulation,
        scene,
        frame,
        lambda current: _step(obj, simulation, scene, current, depsgraph),
        lambda target: _replay(obj, simulation, scene, target, depsgraph),
    )


def readable(simulation: Simulation, frame: int, replay=None) -> np.ndarray:
    """The positions of played frame ``frame``; a frame not kept (or its pressure) simulated
    again first by ``replay(f)``."""
    for cache in (simulation.pressures, simulation.frames):
        if frame not in cache:
            continue
        try:
            cache.get(frame)
        except NotKept as missing:
            if replay is None:
                raise
            replay(missing.frame)
    return simulation.frames.get(frame)


def _shared(value) -> bool:
    """What a kept state holds by reference: Blender's data, and what never changes once made."""
    shared = (MeshHierarchy, GridHierarchy, FoldGuard, VertexNormals, Faces, bpy.types.bpy_struct)
    return isinstance(value, shared) or type(value).__module__.startswith(("bpy", "_bpy", "mathutils.bvhtree"))


def _keeper(simulation: Simulation) -> States:
    if simulation.keeper is None:
        simulation.keeper = States(_shared)
    return simulation.keeper


def _snapshot(simulation: Simulation) -> State:
    """The simulation's whole state: what a step reads and changes (``STATE``); the arrays
    holding the solver's positions are made again from its finest level on restoring."""
    surface = simulation.surface
    solved = {"solved": surface.solved_positions()}
    with surface.solutions_apart() as patches:
        return _keeper(simulation).snapshot((*(getattr(simulation, name) for name in STATE), patches), solved)


def _restore(simulation: Simulation, state: State) -> None:
    """Bring the simulation back to ``state`` (a fresh copy of it: the state stays as kept)."""

    def solved(value: tuple) -> dict[str, np.ndarray]:
        surface = value[STATE.index("surface")]
        surface.with_solutions(value[-1])
        return {"solved": surface.solved_positions()}

    # The live state is let go of first: it is one simulated again, or the head's, kept
    # already (``_replay``); at a million vertices it holds a few hundred MB that would
    # otherwise add to the process's peak while the copy is made.
    for name in STATE:
        if name != "at":
            setattr(simulation, name, None)
    try:
        restored = _keeper(simulation).restore(state, solved)
    except BaseException:  # (never expected) it restarts rather than step from nothing
        for key, found in list(_simulations.items()):
            if found is simulation:
                del _simulations[key]
        raise
    for name, value in zip(STATE, restored[:-1], strict=True):
        setattr(simulation, name, value)


def _replay(obj, simulation: Simulation, scene, target: int, depsgraph: bpy.types.Depsgraph) -> None:
    """Simulate played frame ``target`` again (one not kept), from the solver's state when it
    is at a frame between the kept state before ``target`` and it, else from that state; the
    head's state is kept first, to go on playing from."""
    if simulation.at == simulation.head and simulation.head_state is None:
        simulation.head_state = _snapshot(simulation)
    base = max(frame for frame in simulation.states if frame <= target)
    if not base <= simulation.at <= target:
        _restore(simulation, simulation.states[base])
        simulation.frames.forget_seeds()  # (those simulated again: at most STATE_EVERY of them)
        simulation.pressures.forget_seeds()
    _seed(simulation, simulation.at)
    first = simulation.at + 1
    with _progress(target - first + 1) as done:
        for current in _frames_in_scene(scene, first, target):
            _step(obj, simulation, scene, current, depsgraph, replay=True)
            simulation.replayed += 1
            done(current - first + 1)


def _seed(simulation: Simulation, frame: int) -> None:
    """Hand the frame the solver's state is at to the caches, to read from."""
    if simulation.last is not None:
        simulation.frames.seed(frame, simulation.last)
    if simulation.last_pressure is not None and frame in simulation.pressures:
        simulation.pressures.seed(frame, simulation.last_pressure)


def play_to(obj, simulation: Simulation, scene, frame: int, step, replay=None) -> np.ndarray:
    """``obj``'s response at ``frame`` from ``simulation``: the rest shape before its start, a
    played frame as kept (``replay(f)`` simulates again a frame ``f`` not kept), else
    ``step(f)`` for every frame from the head to ``frame`` (with Blender's progress when there
    are many; a group of soft partners steps them all)."""
    if frame < simulation.start:
        return mesh_data.rest_positions(obj)
    if frame in simulation.frames:
        positions = readable(simulation, frame, replay)
        fit(simulation, frame)  # (frames simulated again are held; the budget may have changed)
        return positions
    first = simulation.head + 1
    with _progress(frame - first + 1) as done:
        for current in _frames_in_scene(scene, first, frame):
            step(current)
            done(current - first + 1)
    return simulation.frames.get(frame)


def built(obj, scene) -> Simulation:
    """The object's simulation, built again when what it depends on changed."""
    simulation = _simulations.get(obj.session_uid)
    if simulation is not None:
        level_count = len(simulation.surface.hierarchy.sizes)
        if fingerprint(obj, scene, level_count) != simulation.fingerprint:
            simulation = None
    if simulation is None:
        simulation = _build(obj, scene)
        _simulations[obj.session_uid] = simulation
    return simulation


def pressure_at(simulation: Simulation, frame: int) -> np.ndarray:
    """The pressure at ``frame`` (simulated already; zeros before the start), (n,) float32."""
    if frame in simulation.pressures:
        return simulation.pressures.get(frame)
    return np.zeros(simulation.surface.vertex_count, dtype=np.float32)


@contextmanager
def _progress(count: int):
    """Blender's progress (the cursor's counter) over ``count`` frames, when there are many;
    yields the function that reports how many are done."""
    manager = bpy.context.window_manager
    if count <= PROGRESS_FRAMES or manager is None:
        yield lambda done: None
        return
    manager.progress_begin(0, count)
    try:
        yield manager.progress_update
    finally:
        manager.progress_end()


def _frames_in_scene(scene, first: int, last: int):
    """Bring the scene to each frame from first to last in turn (colliders move), and back
    to the frame it was at."""
    original = scene.frame_current
    for frame in range(first, last + 1):
        if scene.frame_current != frame:
            scene.frame_set(frame)
        yield frame
    if scene.frame_current != original:
        scene.frame_set(original)


def _step(obj, simulation: Simulation, scene, frame: int, depsgraph: bpy.types.Depsgraph, replay: bool = False) -> None:
    """Simulate ``frame`` (the scene is at it): one frame of ``core.frame.advance``, asking
    the colliders about the surface as they see it (posed, for a rigged mesh). ``replay``: a
    played frame simulated again (``_replay``), handed to the caches to read, not kept again;
    else the frame after the head (the solver's state brought back to the head first)."""
    started = time.perf_counter()
    if not replay and simulation.at != simulation.head:
        assert simulation.head_state is not None
        _restore(simulation, simulation.head_state)
    surface = simulation.surface
    animated.read_per_frame(obj.collision_response, surface.settings)  # keyframed, they change
    if simulation.volume is not None:
        keep_volume.measure(obj, simulation.volume)
    fps = scene.render.fps / scene.render.fps_base
    deformation = posed.Deformation(obj, depsgraph, scene)  # (the frame's: shared with what shows)
    with deformation, finder(obj, simulation, scene, depsgraph, held=deformation) as find:
        if frame > simulation.start:
            held = bool(obj.collision_response.interiors) or obj.collision_response.container is not None
            moved = advance(
                surface,
                find,
                1.0 / fps,
                simulation.folds,
                simulation.overshoot,
                structure=held,
                volume=simulation.volume,
                friction=obj.collision_response.friction > 0,
            )
        else:  # the start frame is the rest shape: it only shows the colliders to the query
            find(surface.positions, None, np.inf)  # (their motion is measured from there)
            moved = False
        # An idle step leaves the positions the last frame had (the same bits: no copy, no write).
        itself = simulation.self_contact
        last = simulation.last if itself is None else simulation.unkept
        if moved or last is None:
            more = shown(surface, simulation.overshoot, simulation.volume)
            last = surface.positions if more is None or not moved else more
        if itself is not None:  # what it shows, kept out of itself: made afresh from it (a pose changes)
            simulation.unkept = last
            last = kept_out_of_itself(obj, simulation, last, depsgraph, find, deformation)
    simulation.last, simulation.at = last, frame
    if not replay:
        simulation.frames.keep(frame, last)
        if frame > simulation.start:
            keep_volume.record(simulation, frame)
    if simulation.pressure is not None:  # from the solver's elastic offsets, cached as the positions
        law = animated.pressure_settings(obj.collision_response)  # (keyframed, it changes)
        reading = simulation.last_pressure  # an idle frame with the same law keeps the last one
        if moved or reading is None or law != simulation.pressure:
            reading = pressure_of(surface, law, simulation.normals)
        simulation.pressure, simulation.last_pressure = law, reading
        if not replay:
            simulation.pressures.keep(frame, reading)
    if replay:
        _seed(simulation, frame)
        return
    simulation.head, simulation.head_state = frame, None
    if simulation.replays and (frame - simulation.start) % STATE_EVERY == 0:
        simulation.states[frame] = _snapshot(simulation)
    fit(simulation, frame)
    simulation.frame_seconds = time.perf_counter() - started


def fit(simulation: Simulation, around: int) -> None:
    """Keep what the played frames hold within the budget (the add-on's preference), letting
    go of frames far from frame ``around`` when it is passed (``core.budget.fit``). Not for
    a bake nor a group of soft partners, which keep no state to simulate again from."""
    if not simulation.replays or not simulation.states:
        return
    caches = [simulation.frames, *([simulation.pressures] if len(simulation.pressures) else [])]
    large = int(LARGE * simulation.surface.vertex_count * 12)
    besides = simulation.states_nbytes
    budget.fit(caches, preferences.budget_bytes(), besides, around, large)


def fit_all(scene) -> None:
    """Each simulation kept within the budget (just changed), around the scene's frame."""
    for simulation in _simulations.values():
        fit(simulation, scene.frame_current if scene is not None else simulation.head)


@contextmanager
def finder(obj, simulation: Simulation, scene, depsgraph, weigh=None, held: posed.Deformation | None = None):
    """The frame's ``find`` (see ``core.frame``), as a context: the pushes out of the
    colliders and the touching flags for the solver's positions (rest space). A posed mesh
    is asked about as Blender poses it: the response key is made to hold the positions asked
    about and the mesh evaluated (so every deformer, a lattice too, is exactly what the
    colliders meet), the rest normals are carried onto it and the pushes back to rest space
    through each vertex's deformation (``posed.Deformation``, made once for the frame's
    queries and freed when the context ends). After the step, a rig that moves each vertex
    affinely (``posed.moves_affinely``) carries the step's moves onto the surface the first
    query met instead: the same positions, without evaluating the mesh again. The deformation:
    the frame's, when the caller holds it (``held``; else made and freed here)."""
    settings = obj.collision_response
    candidates, kinds = structure.contact_objects(obj)
    on_posed = posed.is_posed(obj)
    count = simulation.surface.vertex_count

    def ask(positions, normals, among, offsets, within, unposed=None):
        contact = simulation.query.displacements(
            obj,
            positions,
            normals,
            candidates,
            settings.friction,
            settings.standoff,
            depsgraph,
            among,
            offsets,
            within,
            kinds,
            unposed,
        )
        if among is None:
            simulation.messages = contact.messages
        if weigh is not None:  # soft partners: each push out of one is this mesh's share of it
            weigh(contact)
        return contact

    affine = on_posed and posed.moves_affinely(obj)
    # How much the deformation can lengthen a move: known for a skinned mesh's bones, else
    # taken to be at most twice (a rig's blended bones).
    stretch = (posed.stretch_bound(obj) if affine else None) or 2.0
    # The frame's first query: the positions asked about, and the posed surface met.
    first: list[tuple[np.ndarray, np.ndarray]] = []

    def find(positions: np.ndarray, among: np.ndarray | None, within: float, shown: bool = False):
        if shown:  # positions shown (a swing, the volume given back): not fed back into the contact memory
            with simulation.query.unchanged():
                return find(positions, among, within)
        rest = simulation.rest
        if not on_posed:
            contact = ask(positions, simulation.normals, among, lambda index: positions[index] - rest[index], within)
            return Found(contact.displacement, contact.touching, contact.away, contact.gap, contact.room)
        if among is None:  # the state the key holds already, when it does: no write
            # (With overshoot or volume the key shows more than the solver's state: written again.)
            last = simulation.last
            positions = positions if last is None or simulation.shows_more else last
            seen = _posed(obj, simulation, positions, depsgraph)
            first[:] = [(positions, seen)]
        else:  # only those the step can have brought near a collider (the query asks no others)
            # The furthest move in rest space, stretched as the deformation may: a vertex it
            # brought in is pushed out this frame, not the next.
            within = stretch * within
            among = simulation.query.near_within(among, within)
            if among.size == 0:
                return Found(np.zeros((count, 3), dtype=np.float32), np.zeros(count, dtype=bool))
            elif affine:  # each move carried through its vertex's matrix is its posed move, exactly
                asked, seen = first[0]
                seen = seen.copy()
                seen[among] += deformation.to_posed(positions[among] - asked[among], among)
            else:  # evaluated again: what a lattice, say, makes of the step
                seen = _posed(obj, simulation, positions, depsgraph)
        contact = ask(
            seen,
            lambda index: deformation.normals_to_posed(simulation.normals, index),
            among,
            lambda index: deformation.to_posed(positions[index] - rest[index], index),
            within,
            positions,  # (the rules' frame follows the rig's motion of the mesh as a whole)
        )
        pushed = np.flatnonzero(nonzero_rows(contact.displacement))
        displacement = contact.displacement.copy()
        displacement[pushed] = deformation.to_rest(contact.displacement[pushed], pushed)
        resting = np.flatnonzero(contact.touching)
        away = np.zeros_like(contact.away)
        if resting.size:  # (its way out as a direction in rest space)
            away[resting] = unit_rows(deformation.to_rest(contact.away[resting], resting))
        return Found(displacement, contact.touching, away, contact.gap, contact.room)

    with posed.Deformation(obj, depsgraph, scene) if held is None else nullcontext(held) as deformation:
        yield find


def kept_out_of_itself(
    obj, simulation: Simulation, positions: np.ndarray, depsgraph, find=None, deformation=None
) -> np.ndarray:
    """``positions`` (n, 3, rest space: what the frame shows) moved out of the mesh itself
    (``SelfContact.keep_out``) on the surface Blender poses from them, the moves carried back
    to rest space through each vertex's deformation (``deformation``: the frame's, else made
    here); then, with ``find`` (the frame's), the vertices moved pushed out of the colliders
    again, on these shown positions only."""
    itself = simulation.self_contact
    assert itself is not None
    on_posed = posed.is_posed(obj)
    surface = _posed(obj, simulation, positions, depsgraph) if on_posed else positions
    moves = itself.keep_out(surface, depsgraph)
    moving = np.flatnonzero(nonzero_rows(moves))
    if moving.size == 0:
        return positions
    kept = positions.copy()
    if on_posed:
        with (
            nullcontext(deformation)
            if deformation is not None
            else posed.Deformation(obj, depsgraph, itself.scene) as carry
        ):
            kept[moving] += carry.to_rest(moves[moving], moving)
    else:
        kept[moving] += moves[moving]
    if find is not None:  # what it moved out of itself, out of the colliders (they win)
        reach = float(
            np.sqrt(np.einsum("ij,ij->i", kept[moving] - positions[moving], kept[moving] - positions[moving]).max())
        )
        kept += find(kept, moving, reach * (1.0 + 1e-5), shown=True).push
    return kept


def _posed(obj, simulation: Simulation, positions: np.ndarray, depsgraph) -> np.ndarray:
    """The posed surface of the solver's ``positions``: the response key made to hold them,
    and the mesh as Blender evaluates it."""
    show(obj, positions)
    try:
        return posed.posed_positions(obj, depsgraph)
    except posed.Unfollowable as problem:
        simulation.messages = [str(problem)]  # for the panel
        raise Unusable(str(problem)) from problem


def show(obj, positions: np.ndarray) -> None:
    """Make the response key hold ``positions`` (the solver's state), so the evaluated mesh
    is the posed surface of that state; written only when it holds something else."""
    if not mesh_data.holds(obj, positions):
        mesh_data.write_shape_key(obj, positions)
