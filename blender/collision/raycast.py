"""Batched ray casts against collider objects, in Blender's C++ (Geometry Nodes Raycast).

A Python call per ray costs about 3.5 us; here a hidden helper point cloud carries the ray
origins and directions as attributes, its Geometry Nodes modifier casts every ray against
every collider at once, and the hits come back as attributes: about 0.4 us a ray.
"""

from typing import cast

import bpy
import numpy as np

HELPER_NAME = ".Collision Response Query"
#: How far a ray reaches, and the value a miss stores (far below any signed distance).
REACH = 1e6
MISS = -1e30


class RayCaster:
    """Casts rays from points against a list of collider objects (world space).

    ``cast(colliders, origins, directions, depsgraph)``: signed distances to the first face
    hit, and that face's normal.
    """

    def __init__(self, scene: bpy.types.Scene, owner: str = ""):
        self.scene = scene
        # One helper per owner (a deforming mesh): each casts against its own colliders.
        self.name = f"{HELPER_NAME} ({owner})" if owner else HELPER_NAME

    # -- the helper object and its node tree ----------------------------------------------------

    def _helper(self) -> bpy.types.Object:
        obj = bpy.data.objects.get(self.name)
        if obj is None or obj.type != "MESH":
            mesh = bpy.data.meshes.new(self.name)
            obj = bpy.data.objects.new(self.name, mesh)
            obj.hide_render = True
            obj.hide_select = True
        if obj.name not in self.scene.collection.objects:
            self.scene.collection.objects.link(obj)
        obj.matrix_world.identity()
        return obj

    def _build_tree(self, colliders: list[bpy.types.Object]) -> bpy.types.NodeTree:
        """One raycast and one stored value per collider: the first face's normal and the
        signed distance to it (see ``cast``), as one colour (x, y, z, distance). Each Store
        node evaluates its field afresh, so storing them separately would cast every ray
        twice."""
        tree = cast(bpy.types.GeometryNodeTree, bpy.data.node_groups.new(self.name, "GeometryNodeTree"))
        # fake-bpy-module's stub lists only 'DEFAULT' as a socket type; Blender takes any.
        tree.interface.new_socket("Geometry", in_out="INPUT", socket_type="NodeSocketGeometry")  # type: ignore[arg-type]
        tree.interface.new_socket("Geometry", in_out="OUTPUT", socket_type="NodeSocketGeometry")  # type: ignore[arg-type]
        nodes, links = tree.nodes, tree.links
        geometry = nodes.new("NodeGroupInput").outputs[0]
        for i, collider in enumerate(colliders):
            info = nodes.new("GeometryNodeObjectInfo")
            info.inputs["Object"].default_value = collider
            info.transform_space = "RELATIVE"  # helper at the origin: world space
            ray = nodes.new("GeometryNodeInputNamedAttribute")
            ray.data_type = "FLOAT_VECTOR"
            ray.inputs["Name"].default_value = f"ray{i}"
            raycast = nodes.new("GeometryNodeRaycast")
            raycast.inputs["Ray Length"].default_value = REACH
            links.new(info.outputs["Geometry"], raycast.inputs["Target Geometry"])
            links.new(ray.outputs["Attribute"], raycast.inputs["Ray Direction"])
            facing = nodes.new("ShaderNodeVectorMath")
            facing.operation = "DOT_PRODUCT"
            links.new(raycast.outputs["Hit Normal"], facing.inputs[0])
            links.new(ray.outputs["Attribute"], facing.inputs[1])
            sign = _math(nodes, "SIGN")
            links.new(facing.outputs["Value"], sign.inputs[0])
            signed = _math(nodes, "MULTIPLY")
            links.new(raycast.outputs["Hit Distance"], signed.inputs[0])
            links.new(sign.outputs[0], signed.inputs[1])
            # A miss becomes MISS: signed * hit + (1 - hit) * MISS, exact for hits (a form
            # like (signed - MISS) * hit + MISS would lose them to float32 rounding).
            kept = _math(nodes, "MULTIPLY")
            links.new(signed.outputs[0], kept.inputs[0])
            links.new(raycast.outputs["Is Hit"], kept.inputs[1])
            missed = _math(nodes, "MULTIPLY_ADD")
            links.new(raycast.outputs["Is Hit"], missed.inputs[0])
            missed.inputs[1].default_value = -MISS
            missed.inputs[2].default_value = MISS
            value = _math(nodes, "ADD")
            links.new(kept.outputs[0], value.inputs[0])
            links.new(missed.outputs[0], value.inputs[1])
            normal = nodes.new("ShaderNodeSeparateXYZ")
            links.new(raycast.outputs["Hit Normal"], normal.inputs[0])
            packed = nodes.new("FunctionNodeCombineColor")  # RGB mode: no clamping
            for axis, channel in enumerate(("Red", "Green", "Blue")):
                links.new(normal.outputs[axis], packed.inputs[channel])
            links.new(value.outputs[0], packed.inputs["Alpha"])
            store = nodes.new("GeometryNodeStoreNamedAttribute")
            store.data_type = "FLOAT_COLOR"
            store.inputs["Name"].default_value = f"hit{i}"
            links.new(geometry, store.inputs["Geometry"])
            links.new(packed.outputs[0], store.inputs["Value"])
            geometry = store.outputs["Geometry"]
        links.new(geometry, nodes.new("NodeGroupOutput").inputs[0])
        return tree

    def _prepare(self, colliders: list[bpy.types.Object]) -> bpy.types.Object:
        obj = self._helper()
        modifier = obj.modifiers.get("raycast") or obj.modifiers.new("raycast", "NODES")
        names = "\n".join(c.name for c in colliders)
        tree = modifier.node_group
        # The tree remembers whom it casts against (it outlives this object across undo).
        if tree is None or tree.get("colliders") != names:
            modifier.node_group = self._build_tree(colliders)
            modifier.node_group["colliders"] = names
            if tree is not None and tree.users == 0:
                bpy.data.node_groups.remove(tree)
        return obj

    def remove(self) -> None:
        """Delete the helper object, its mesh and node tree."""
        remove_helper(bpy.data.objects.get(self.name))

    # -- casting --------------------------------------------------------------------------------

    def cast(
        self,
        colliders: list[bpy.types.Object],
        origins: np.ndarray,
        directions: np.ndarray,
        depsgraph: bpy.types.Depsgraph,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Signed distances (k, n) from ``origins`` (n, 3) along ``directions`` (k, n, 3), one
        direction set per collider, to the first face of that collider: positive where the
        face faces along the ray (the ray leaves the volume there), negative where it faces
        against it (the ray enters), ``nan`` where nothing is hit. And that face's normal as
        the mesh has it (k, n, 3), world space, ``nan`` where nothing is hit. ``depsgraph``:
        the evaluated one, which evaluates the helper."""
        count, k = origins.shape[0], len(colliders)
        signed = np.full((k, count), np.nan, dtype=np.float32)
        normals = np.full((k, count, 3), np.nan, dtype=np.float32)
        if count == 0 or k == 0:
            return signed, normals
        obj = self._prepare(colliders)
        mesh = cast(bpy.types.Mesh, obj.data)  # the helper is always our own mesh
        if len(mesh.vertices) != count:  # resizing costs about 10 us: exact size each cast
            mesh.clear_geometry()
            mesh.vertices.add(count)
        for i in range(k):
            name = f"ray{i}"
            attribute = mesh.attributes.get(name) or mesh.attributes.new(name, "FLOAT_VECTOR", "POINT")
            attribute.data.foreach_set("vector", np.ascontiguousarray(directions[i], dtype=np.float32).ravel())
        # The generic attribute is a plain copy; vertices.foreach_set("co") costs far more.
        positions = np.ascontiguousarray(origins, dtype=np.float32).ravel()
        mesh.attributes["position"].data.foreach_set("vector", positions)
        mesh.update()
        depsgraph.update()
        evaluated = cast(bpy.types.Mesh, obj.evaluated_get(depsgraph).data)
        values = np.empty((count, 4), dtype=np.float32)
        for i in range(k):
            evaluated.attributes[f"hit{i}"].data.foreach_get("color", values.ravel())
            hit = values[:, 3] > MISS / 2
            signed[i, hit] = values[hit, 3]
            normals[i, hit] = values[hit, :3]
        # Emptied: the helper is evaluated again whenever a collider moves (the next frame
        # change, before any ray is asked for), and with no points that costs nothing.
        mesh.clear_geometry()
        return signed, normals


def _math(nodes, operation: str):
    node = nodes.new("ShaderNodeMath")
    node.operation = operation
    return node


def remove_helper(obj) -> None:
    """Delete a helper object with its mesh and node tree (they are rebuilt when needed)."""
    if obj is None:
        return
    modifier = obj.modifiers.get("raycast")
    tree = modifier.node_group if modifier else None
    mesh = obj.data
    bpy.data.objects.remove(obj)
    if mesh is not None and mesh.users == 0:
        bpy.data.meshes.remove(mesh)
    if tree is not None and tree.users == 0:
        bpy.data.node_groups.remove(tree)


def remove_all_helpers() -> None:
    """Delete every helper (before saving: they hold nothing worth keeping)."""
    for obj in [o for o in bpy.data.objects if o.name.startswith(HELPER_NAME)]:
        remove_helper(obj)
