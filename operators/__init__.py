"""Operators: enable and disable the response, colliders, bake and free the bake."""

import bpy
import numpy as np

from ..blender import curves, guard, mesh_data, point_cache, posed, pressure, simulation
from ..blender import volume as keep_volume
from .bake_options import BakeOptions
from .contact import classes as contact_classes
from .lists import OVERRIDE_LISTS, add_selected, keys_poll, lists_poll, others, remove_highlighted


class OBJECT_OT_collision_response_enable(bpy.types.Operator):
    """Make the active mesh respond to colliders; selected objects become its colliders"""

    bl_idname = "object.collision_response_enable"
    bl_label = "Enable Collision Response"
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context):
        return keys_poll(cls, context)

    def execute(self, context):
        obj = context.active_object
        try:
            simulation.check(obj)
        except simulation.LinkedMesh as problem:  # enabled all the same: it bakes to a point cache
            self.report({"WARNING"}, str(problem))
        except simulation.Unusable as problem:
            self.report({"ERROR"}, str(problem))
            return {"CANCELLED"}
        settings = obj.collision_response
        listed = {item.obj for item in settings.colliders}
        if obj.override_library is not None and any(o not in listed for o in others(context)):
            self.report({"ERROR"}, OVERRIDE_LISTS.format(name=obj.name) + ": select it alone to enable it with them")
            return {"CANCELLED"}
        # A key of that name the response wrote is taken back (``properties``), only the user's is refused.
        if not settings.enabled and mesh_data.live_key(obj) is not None and not mesh_data.is_own_live_key(obj):
            self.report(
                {"ERROR"},
                f"'{obj.name}' has a shape key of its own named '{mesh_data.SHAPE_KEY}': rename it "
                "(the response writes a key of that name)",
            )
            return {"CANCELLED"}
        add_selected(context, "colliders")
        settings.start_frame = context.scene.frame_start
        count = simulation.level_count(obj)
        # A first, gentle response: the finer the level the more it absorbs, none at level 0.
        curves.ensure_curves(settings, count, defaults={"absorption": np.linspace(0.0, 0.5, count)})
        settings.enabled = True
        # The colliders as this frame's animation places them (a value set since, unkeyed, is
        # what any frame change would undo): the simulation starts from where they are now.
        with guard.busy():
            context.scene.frame_set(context.scene.frame_current)
        messages = simulation.update_object(obj, context.scene, context.evaluated_depsgraph_get())
        # Evaluate the key just written now, while the guard holds: left to the next update,
        # it reads as an edit of the mesh, which restarts (builds again) the simulation just built.
        with guard.busy():
            context.view_layer.update()
        for message in messages:
            self.report({"WARNING"}, message)
        return {"FINISHED"}


class OBJECT_OT_collision_response_disable(bpy.types.Operator):
    """Stop the response and remove its shape key: the mesh is as it was (settings are kept)"""

    bl_idname = "object.collision_response_disable"
    bl_label = "Disable Collision Response"
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context):
        return keys_poll(cls, context)

    def execute(self, context):
        obj = context.active_object
        if not obj.collision_response.enabled:  # a key of that name is the user's: kept
            self.report({"INFO"}, f"'{obj.name}' does not respond: nothing to disable")
            return {"CANCELLED"}
        obj.collision_response.enabled = False  # (which removes its key and pressure: properties)
        return {"FINISHED"}


class OBJECT_OT_collision_response_collider_add(bpy.types.Operator):
    """Add the selected objects (other than the active mesh) as colliders"""

    bl_idname = "object.collision_response_collider_add"
    bl_label = "Add Selected Colliders"
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context):
        if not lists_poll(cls, context):
            return False
        if not others(context):
            cls.poll_message_set("Select the colliders, then the mesh last (active)")
            return False
        return True

    def execute(self, context):
        add_selected(context, "colliders")
        return {"FINISHED"}


class OBJECT_OT_collision_response_collider_remove(bpy.types.Operator):
    """Remove the highlighted collider from the list"""

    bl_idname = "object.collision_response_collider_remove"
    bl_label = "Remove Collider"
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context):
        if not lists_poll(cls, context):
            return False
        if not len(context.active_object.collision_response.colliders):
            cls.poll_message_set("The list of colliders is empty")
            return False
        return True

    def execute(self, context):
        remove_highlighted(context.active_object, "colliders", "active_collider")
        return {"FINISHED"}


def _frame_range(scene) -> tuple[int, int]:
    """The preview range when it is on, else the scene's range."""
    if scene.use_preview_range:
        return scene.frame_preview_start, scene.frame_preview_end
    return scene.frame_start, scene.frame_end


class OBJECT_OT_collision_response_bake(BakeOptions, bpy.types.Operator):
    """Bake the response over the frame range (the preview range when on) to shape keys, or
    to a point cache file played by a Mesh Cache modifier; the result plays and renders
    without the add-on. Esc cancels"""

    bl_idname = "object.collision_response_bake"
    bl_label = "Bake Collision Response"
    bl_options = {"REGISTER", "UNDO"}

    _timer = None

    @classmethod
    def poll(cls, context):
        if not keys_poll(cls, context):
            return False
        obj = context.active_object
        baked = point_cache.baked_to(obj)
        if baked is not None:
            cls.poll_message_set(f"Already baked to {baked}: free the bake first")
            return False
        if not obj.collision_response.enabled:
            cls.poll_message_set("Enable the response first")
            return False
        return True

    def _start(self, context) -> bool:
        self.obj = context.active_object
        self.scene = context.scene
        self.first, self.last = _frame_range(self.scene)
        if self.properties.is_property_set("frame_start"):
            self.first = self.frame_start
        if self.properties.is_property_set("frame_end"):
            self.last = self.frame_end
        self.original_frame = self.scene.frame_current
        self.frame = self.first
        # Each frame's positions until the end, when the keys are made: a key added a frame would
        # make Blender copy every key so far at each frame after (a bake's time grew with the
        # square of its length).
        self.baked: list[tuple[int, np.ndarray]] = []
        self.pressures: list[tuple[int, np.ndarray]] = []  # each frame's, when the pressure is written
        self.cache: point_cache.Writer | None = None
        if self.last < self.first:
            self.report({"ERROR"}, f"No frames to bake: {self.first}-{self.last}")
            return False
        try:
            simulation.check(self.obj)
        except simulation.LinkedMesh as problem:
            if self.to != "POINT_CACHE":
                self.report({"ERROR"}, f"{problem} (shape keys cannot be added to a linked mesh)")
                return False
        except simulation.Unusable as problem:
            self.report({"ERROR"}, str(problem))
            return False
        itself = self.obj.collision_response.self_contact  # (it meets itself: something to bake)
        present, missing = simulation.present_colliders(self.obj)
        if not present and not itself:
            count = self.last - self.first + 1
            gone = f" ({'; '.join(missing)})" if missing else ""
            self.report(
                {"WARNING"}, f"'{self.obj.name}' has no colliders{gone}: the bake would be {count} unchanged frames"
            )
            return False
        if self.to == "POINT_CACHE":
            self.path = self.filepath or point_cache.default_path(self.obj)
            refused = point_cache.unsaved_problem(self.path) or point_cache.placement_problem(self.obj)
            if refused is not None:  # said before anything is written or changed
                self.report({"ERROR"}, refused)
                return False
            try:
                frames = self.last - self.first + 1
                self.cache = point_cache.Writer(
                    bpy.path.abspath(self.path), len(self.obj.data.vertices), self.first, frames
                )
            except OSError as problem:
                self.report({"ERROR"}, f"Cannot write the point cache: {problem}")
                return False
        return True

    def _bake_frame(self, context) -> str | None:
        """Bake one frame; a message when the object cannot respond there."""
        playing = simulation.get(self.obj)
        if playing is not None:  # each frame is played once and kept by the bake: none left out
            playing.replays = False
        self.scene.frame_set(self.frame)  # the handler simulates and shows this frame
        depsgraph = context.evaluated_depsgraph_get()
        try:
            positions = simulation.positions_at(self.obj, self.scene, self.frame, depsgraph)
            if self.cache is not None:
                self.cache.add(point_cache.shown_positions(self.obj, positions, depsgraph))
            else:
                self.baked.append((self.frame, positions))  # read only, kept as it is
            state = simulation.get(self.obj)
            if state is not None and state.pressure is not None:
                self.pressures.append((self.frame, simulation.pressure_at(state, self.frame)))
        except (simulation.Unusable, posed.Unfollowable) as problem:
            return str(problem)
        self.frame += 1
        return None

    def _finish(self, context):
        if self.cache is not None:
            self.cache.close()
            point_cache.add_modifier(self.obj, self.path, self.first)
            where = f" to {self.path}"
        else:
            keys = [(frame, mesh_data.add_baked_key(self.obj, frame, positions)) for frame, positions in self.baked]
            mesh_data.key_baked(keys, context.preferences.edit)
            where = ""
        # A Reach too short to keep the volume is said, as the panel says it (the bake is made).
        short = keep_volume.warning(simulation.get(self.obj), self.scene)
        if self.pressures and self.obj.data.library is None:  # (a linked mesh takes no attributes)
            pressure.bake(self.obj, self.pressures, self.obj.collision_response.pressure_color)
        self.obj.collision_response.enabled = False  # (which removes its key and pressure: properties)
        self.scene.frame_set(self.original_frame)
        self.report({"INFO"}, f"Baked frames {self.first}-{self.last} of '{self.obj.name}'{where}")
        if short:
            self.report({"WARNING"}, f"'{self.obj.name}': {'. '.join(short)}")
        return {"FINISHED"}

    def _cancel(self, problem: str | None = None):
        if self.cache is not None:
            self.cache.discard()
        self.scene.frame_set(self.original_frame)
        if problem is not None:
            self.report({"ERROR"}, f"{problem}: nothing was baked")
        else:
            self.report({"WARNING"}, "Bake cancelled: nothing was changed")
        return {"CANCELLED"}

    def execute(self, context):
        if not self._start(context):
            return {"CANCELLED"}
        return self._run(context)

    def _run(self, context):
        """Every frame at once, with Blender's progress."""
        context.window_manager.progress_begin(self.first, self.last)
        try:
            with point_cache.editable_mesh(self.obj):  # an override's linked mesh: a copy meanwhile
                while self.frame <= self.last:
                    problem = self._bake_frame(context)
                    if problem is not None:
                        return self._cancel(problem)
                    context.window_manager.progress_update(self.frame)
                mesh_data.remove_shape_key(self.obj)  # (from the copy, before it goes)
        finally:
            context.window_manager.progress_end()
        return self._finish(context)

    def invoke(self, context, event):
        if not self._start(context):
            return {"CANCELLED"}
        if self.obj.override_library is not None and self.obj.data.library is not None:
            return self._run(context)  # its mesh is swapped for the whole bake: no modal steps
        context.window_manager.progress_begin(self.first, self.last)
        self._timer = context.window_manager.event_timer_add(0.001, window=context.window)
        context.window_manager.modal_handler_add(self)
        return {"RUNNING_MODAL"}

    def modal(self, context, event):
        if event.type == "ESC":
            self._end_modal(context)
            return self._cancel()
        if event.type != "TIMER":
            return {"PASS_THROUGH"}
        problem = self._bake_frame(context)
        if problem is not None:
            self._end_modal(context)
            return self._cancel(problem)
        context.window_manager.progress_update(self.frame)
        if self.frame > self.last:
            self._end_modal(context)
            return self._finish(context)
        return {"RUNNING_MODAL"}

    def _end_modal(self, context) -> None:
        context.window_manager.event_timer_remove(self._timer)
        context.window_manager.progress_end()


class OBJECT_OT_collision_response_free_bake(bpy.types.Operator):
    """Remove the baked shape keys or point cache modifier (the file stays) and return to live
    response"""

    bl_idname = "object.collision_response_free_bake"
    bl_label = "Free Bake"
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context):
        if not keys_poll(cls, context):
            return False
        if point_cache.baked_to(context.active_object) is None:
            cls.poll_message_set("Nothing is baked")
            return False
        return True

    def execute(self, context):
        obj = context.active_object
        mesh_data.free_baked_keys(obj)
        point_cache.remove_modifier(obj)
        pressure.free_baked(obj)
        obj.collision_response.enabled = True
        simulation.update_object(obj, context.scene, context.evaluated_depsgraph_get())
        return {"FINISHED"}


classes = (
    OBJECT_OT_collision_response_enable,
    OBJECT_OT_collision_response_disable,
    OBJECT_OT_collision_response_collider_add,
    OBJECT_OT_collision_response_collider_remove,
    OBJECT_OT_collision_response_bake,
    OBJECT_OT_collision_response_free_bake,
    *contact_classes,  # interior structure and soft partners (operators/contact.py)
)

register, unregister = bpy.utils.register_classes_factory(classes)
