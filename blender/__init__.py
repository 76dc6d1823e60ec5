"""The Blender glue: everything between Blender's data and the solver in ``core``.

Each module has one job (see README.md); the add-on's ``__init__`` registers them.
"""
