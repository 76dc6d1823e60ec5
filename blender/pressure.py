"""The pressure attributes: written live each frame, and baked so a render without the
add-on shows them.

Live, the point attribute "collision_pressure" (float) holds the frame's pressure
(``core.pressure``), and "collision_pressure_color" (optional) the same as grey, clamped to
0-1. A bake keeps each frame's as "collision_pressure_<frame>" and adds a Geometry Nodes
modifier, "Collision Pressure", that stores the current frame's as "collision_pressure"
(and its colour): an attribute cannot be keyed, so the modifier picks it by the frame.
"""

from typing import Any

import bpy
import numpy as np

from . import guard

PRESSURE_ATTRIBUTE = "collision_pressure"  # per vertex, float: 0 unpressed, 1 at the Full Pressure depth
PRESSURE_COLOR = "collision_pressure_color"  # the same as grey, clamped to 0-1 (optional)
BAKED_PREFIX = "collision_pressure_"  # one a frame: "collision_pressure_12"
MODIFIER = "Collision Pressure"


def write(obj, pressure: np.ndarray | None, color: bool) -> None:
    """Put ``pressure`` (n,) in "collision_pressure" (and, with ``color``, as grey in
    "collision_pressure_color"); None removes them."""
    mesh = obj.data
    with guard.busy():
        wanted = {} if pressure is None else {PRESSURE_ATTRIBUTE: "FLOAT"}
        if pressure is not None and color:
            wanted[PRESSURE_COLOR] = "FLOAT_COLOR"
        for name in (PRESSURE_ATTRIBUTE, PRESSURE_COLOR):
            attribute = mesh.attributes.get(name)
            if attribute is not None and (name not in wanted or attribute.domain != "POINT"):
                mesh.attributes.remove(attribute)
        if pressure is None:
            return
        values = np.ascontiguousarray(pressure, dtype=np.float32)
        for name, kind in wanted.items():
            attribute = mesh.attributes.get(name) or mesh.attributes.new(name, kind, "POINT")
            if kind == "FLOAT":
                attribute.data.foreach_set("value", values)
            else:
                grey = np.repeat(np.clip(values, 0.0, 1.0), 4).reshape(-1, 4)
                grey[:, 3] = 1.0
                attribute.data.foreach_set("color", grey.ravel())
        mesh.update()


def is_written(obj) -> bool:
    return obj.data.attributes.get(PRESSURE_ATTRIBUTE) is not None


def _is_baked_name(name: str) -> bool:
    return name.startswith(BAKED_PREFIX) and name[len(BAKED_PREFIX) :].isdigit()


def bake(obj, frames: list[tuple[int, np.ndarray]], color: bool) -> None:
    """Keep each frame's pressure as "collision_pressure_<frame>" and add the modifier that
    shows the current frame's; the live attributes go."""
    mesh = obj.data
    write(obj, None, color)
    for frame, values in frames:
        attribute = mesh.attributes.new(f"{BAKED_PREFIX}{frame}", "FLOAT", "POINT")
        attribute.data.foreach_set("value", np.ascontiguousarray(values, dtype=np.float32))
    modifier = obj.modifiers.new(MODIFIER, "NODES")
    modifier.node_group = _node_group(color)
    mesh.update()


def free_baked(obj) -> None:
    """Remove the baked pressures and their modifier (its node group goes with its last user)."""
    mesh = obj.data
    for name in [a.name for a in mesh.attributes if _is_baked_name(a.name)]:
        mesh.attributes.remove(mesh.attributes[name])
    modifier = obj.modifiers.get(MODIFIER)
    if modifier is not None:
        group = modifier.node_group
        obj.modifiers.remove(modifier)
        if group is not None and group.users == 0:
            bpy.data.node_groups.remove(group)


def _node_group(color: bool) -> Any:
    """Scene frame -> "collision_pressure_<frame>" -> stored as "collision_pressure" (and as
    grey, clamped, in "collision_pressure_color")."""
    # Typed loosely: the stubs know nodes and sockets by their base types only.
    tree: Any = bpy.data.node_groups.new(f".{MODIFIER}", "GeometryNodeTree")
    tree.interface.new_socket("Geometry", in_out="INPUT", socket_type="NodeSocketGeometry")
    tree.interface.new_socket("Geometry", in_out="OUTPUT", socket_type="NodeSocketGeometry")
    nodes: Any = tree.nodes
    links = tree.links
    given, result = nodes.new("NodeGroupInput"), nodes.new("NodeGroupOutput")
    time = nodes.new("GeometryNodeInputSceneTime")
    text = nodes.new("FunctionNodeValueToString")  # the frame, no decimals
    prefix = nodes.new("FunctionNodeInputString")
    prefix.string = BAKED_PREFIX
    join = nodes.new("GeometryNodeStringJoin")
    links.new(time.outputs["Frame"], text.inputs["Value"])
    # A multi-input socket lists its newest link first: the frame, then the prefix before it.
    links.new(text.outputs[0], join.inputs["Strings"])
    links.new(prefix.outputs[0], join.inputs["Strings"])
    named = nodes.new("GeometryNodeInputNamedAttribute")
    named.data_type = "FLOAT"
    links.new(join.outputs[0], named.inputs["Name"])
    geometry = given.outputs[0]
    stores = [(PRESSURE_ATTRIBUTE, "FLOAT", named.outputs["Attribute"])]
    if color:
        clamp = nodes.new("ShaderNodeClamp")
        links.new(named.outputs["Attribute"], clamp.inputs["Value"])
        stores.append((PRESSURE_COLOR, "FLOAT_COLOR", clamp.outputs[0]))
    for name, kind, value in stores:
        store = nodes.new("GeometryNodeStoreNamedAttribute")
        store.data_type, store.domain = kind, "POINT"
        store.inputs["Name"].default_value = name
        links.new(geometry, store.inputs["Geometry"])
        links.new(value, store.inputs["Value"])
        geometry = store.outputs["Geometry"]
    links.new(geometry, result.inputs[0])
    return tree
