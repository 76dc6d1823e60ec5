"""Exact reference ray casts for the collision tests: every ray against every triangle."""

import bpy
import numpy as np


def world_triangles(obj) -> np.ndarray:
    """The evaluated object's triangles in world space, (t, 3, 3)."""
    depsgraph = bpy.context.evaluated_depsgraph_get()
    evaluated = obj.evaluated_get(depsgraph)
    mesh = evaluated.to_mesh()
    mesh.calc_loop_triangles()
    points = np.empty(len(mesh.vertices) * 3)
    mesh.vertices.foreach_get("co", points)
    corners = np.empty(len(mesh.loop_triangles) * 3, dtype=np.int64)
    mesh.loop_triangles.foreach_get("vertices", corners)
    matrix = np.array(evaluated.matrix_world)
    world = points.reshape(-1, 3) @ matrix[:3, :3].T + matrix[:3, 3]
    evaluated.to_mesh_clear()
    triangles = world[corners.reshape(-1, 3)]
    if np.linalg.det(matrix[:3, :3]) < 0:  # a mirrored object's faces turn inside out
        triangles = triangles[:, ::-1]
    return triangles


def first_hit(origins: np.ndarray, directions: np.ndarray, triangles: np.ndarray):
    """Distance to the first triangle along each ray and whether the ray leaves the volume
    there (the triangle's outward normal faces along the ray). inf where nothing is hit."""
    a, b, c = triangles[:, 0], triangles[:, 1], triangles[:, 2]
    e1, e2 = b - a, c - a
    normal = np.cross(e1, e2)
    best = np.full(len(origins), np.inf)
    leaving = np.zeros(len(origins), dtype=bool)
    for start in range(0, len(origins), 256):
        o, d = origins[start : start + 256, None], directions[start : start + 256, None]
        p = np.cross(d, e2[None])
        det = (e1[None] * p).sum(-1)
        with np.errstate(divide="ignore", invalid="ignore"):
            inv = 1.0 / det
            s = o - a[None]
            u = (s * p).sum(-1) * inv
            q = np.cross(s, e1[None])
            v = (d * q).sum(-1) * inv
            t = (e2[None] * q).sum(-1) * inv
        ok = (np.abs(det) > 1e-14) & (u >= 0) & (v >= 0) & (u + v <= 1) & (t >= 0)
        t = np.where(ok, t, np.inf)
        which = np.argmin(t, axis=1)
        rows = np.arange(len(which))
        best[start : start + 256] = t[rows, which]
        leaving[start : start + 256] = (normal[which] * directions[start : start + 256]).sum(-1) > 0
    return best, leaving
