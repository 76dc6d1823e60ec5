"""The bake operator's options (a mixin, as Blender's ExportHelper is; the .pyi beside it
types them for mypy)."""

import bpy
from bpy.props import EnumProperty, IntProperty, StringProperty

#: A path given as "//..." is beside the .blend (the bake reads it so): Blender 4.5 and later
#: warn of such a path unless the property says it takes one (4.2-4.4 know no such option).
_RELATIVE = {"ANIMATABLE", "PATH_SUPPORTS_BLEND_RELATIVE"} if bpy.app.version >= (4, 5, 0) else {"ANIMATABLE"}


class BakeOptions:
    to: EnumProperty(
        name="Bake To",
        items=[
            ("SHAPE_KEYS", "Shape Keys", "One shape key a frame, in the .blend"),
            ("POINT_CACHE", "Point Cache", "A PC2 file played by a Mesh Cache modifier: long shots, overrides"),
        ],
        default="SHAPE_KEYS",
    )
    filepath: StringProperty(
        name="File",
        description="The PC2 file (default: beside the .blend, named after the object)",
        subtype="FILE_PATH",
        options=_RELATIVE,
    )
    frame_start: IntProperty(name="Start", description="First frame (default: the scene's or preview range)")
    frame_end: IntProperty(name="End", description="Last frame (default: the scene's or preview range)")
