"""What the operators on a responding mesh's object lists share (its colliders, its
interior structure): the polls, adding the selection once, removing the highlighted row."""

from ..blender import simulation


def mesh_poll(cls, context) -> bool:
    """The active object is a mesh; else the poll says so."""
    obj = context.active_object
    if obj is None or obj.type != "MESH":
        cls.poll_message_set("Select a mesh object")
        return False
    return True


def keys_poll(cls, context) -> bool:
    """The active object is a mesh whose shape keys can change now: not in Edit Mode, where
    Blender writes its own copy of the keys back on leaving (a bake made there had its key
    put back at value 0 on leaving, and the live response showed nothing after Free Bake);
    else the poll says so."""
    if not mesh_poll(cls, context):
        return False
    if context.active_object.mode == "EDIT":
        cls.poll_message_set("Leave Edit Mode first: Blender writes the mesh's shape keys back on leaving it")
        return False
    return True


def lists_poll(cls, context) -> bool:
    """The active object is a mesh whose lists can change: an override's come from its asset
    file, and Blender adds no row to them (its list buttons raised a traceback); else the
    poll says so."""
    if not mesh_poll(cls, context):
        return False
    if context.active_object.override_library is not None:
        cls.poll_message_set(OVERRIDE_LISTS.format(name=context.active_object.name) + " (change them there)")
        return False
    return True


#: Why an override's lists cannot change.
OVERRIDE_LISTS = "'{name}' is a library override: its lists are the asset file's"


def others(context) -> list:
    """The selected objects other than the active one."""
    return [o for o in context.selected_objects if o != context.active_object]


def add_selected(context, rows: str) -> None:
    """Every selected object but the active mesh joins its list ``rows`` (once)."""
    obj = context.active_object
    items = getattr(obj.collision_response, rows)
    present = {item.obj for item in items}
    for other in others(context):
        if other not in present:
            items.add().obj = other


def remove_highlighted(obj, rows: str, highlighted: str) -> None:
    """Remove the highlighted row (index ``highlighted``) of ``obj``'s list ``rows``; the
    highlight stays on a row."""
    settings = obj.collision_response
    items = getattr(settings, rows)
    items.remove(getattr(settings, highlighted))
    setattr(settings, highlighted, max(0, min(getattr(settings, highlighted), len(items) - 1)))
    simulation.invalidate(obj)
