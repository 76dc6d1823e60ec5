"""The frames cached, drawn along the bottom of the Timeline and Dope Sheet as Blender draws
its physics caches: a strip from the start frame to the last frame simulated of the active
object's response. Playing on extends it; a change that restarts the response clears it."""

from typing import cast

import bpy

#: The strip's height in pixels and its colour (as a physics cache's, a little transparent).
HEIGHT = 4
COLOR = (1.0, 0.55, 0.1, 0.8)

_handle = None


def cached_span(obj) -> tuple[int, int] | None:
    """The frames ``obj``'s response holds, first and last, or None when it holds none."""
    from . import simulation  # (this module registers before the simulations exist)

    state = None if obj is None else simulation.get(obj)
    if state is None or state.head < state.start:
        return None
    return state.start, state.head


def _draw() -> None:
    context = bpy.context
    region = context.region
    span = cached_span(context.active_object)
    if span is None or region is None:
        return
    import gpu  # only where there is a window to draw in (never in the background)
    from gpu_extras.batch import batch_for_shader

    left, right = _pixel(region.view2d, span[0] - 0.5), _pixel(region.view2d, span[1] + 0.5)
    corners = ((left, 0.0), (right, 0.0), (right, HEIGHT), (left, HEIGHT))
    shader = gpu.shader.from_builtin("UNIFORM_COLOR")
    batch = batch_for_shader(shader, "TRIS", {"pos": corners}, indices=((0, 1, 2), (0, 2, 3)))
    gpu.state.blend_set("ALPHA")
    shader.bind()
    shader.uniform_float("color", COLOR)
    batch.draw(shader)
    gpu.state.blend_set("NONE")


def _pixel(view, frame: float) -> float:
    """The region's x, in pixels, of ``frame`` (unclipped: a strip may run off the view)."""
    x, _y = cast("tuple[float, float]", view.view_to_region(frame, 0.0, clip=False))
    return x


def register() -> None:
    global _handle
    if bpy.app.background:  # no window: nothing to draw in
        return
    _handle = bpy.types.SpaceDopeSheetEditor.draw_handler_add(_draw, (), "WINDOW", "POST_PIXEL")


def unregister() -> None:
    global _handle
    if _handle is not None:
        bpy.types.SpaceDopeSheetEditor.draw_handler_remove(_handle, "WINDOW")
        _handle = None
