"""What a responding mesh meets, with the role each object plays: its interior structure
(bones, a rib cage, muscles under the skin: volumes it stays outside of), its container (a
closed volume it stays inside of), and its colliders. The roles are ``core.contact``'s kinds;
the query treats them alike but for the side and which push wins (see ``core.contact``)."""

from ..core.contact import COLLIDER, CONTAINER, INTERIOR


def interiors(obj) -> list:
    return [item.obj for item in obj.collision_response.interiors]


def plain_colliders(obj) -> list:
    """The colliders proper: the list and the collection's objects."""
    settings = obj.collision_response
    found = [item.obj for item in settings.colliders]
    if settings.collider_collection is not None:
        found += list(settings.collider_collection.all_objects)
    return found


def contact_objects(obj) -> tuple[list, list[int]]:
    """Every object the surface meets and its kind, structure first: an object listed both as
    structure and as a collider holds the surface (the query keeps an object's first kind)."""
    settings = obj.collision_response
    objects = interiors(obj)
    kinds = [INTERIOR] * len(objects)
    if settings.container is not None:
        objects.append(settings.container)
        kinds.append(CONTAINER)
    colliders = plain_colliders(obj)
    return objects + colliders, kinds + [COLLIDER] * len(colliders)
