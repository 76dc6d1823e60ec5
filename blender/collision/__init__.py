"""Collision queries in Blender: displacement vectors out of colliders (see README.md)."""

from .colliders import Collider, usable_colliders
from .query import CollisionQuery, Contact

__all__ = ["Collider", "CollisionQuery", "Contact", "usable_colliders"]
