"""The extension as Blender sees it: built, validated, installed, enabled, disabled."""

import importlib
import zipfile

import addon_utils
import bpy
from conftest import MODULE


def test_the_zip_holds_the_add_on_and_no_development_files(extension_zip):
    names = zipfile.ZipFile(extension_zip).namelist()
    assert "blender_manifest.toml" in names and "__init__.py" in names and "core/solver.py" in names
    assert "blender/simulation.py" in names and "blender/presets/collision_response/Rubber.py" in names
    assert not [n for n in names if n.startswith(("tests/", "tools/", "docs/", ".ci/", ".venv")) or "__pycache__" in n]
    # The Blender glue lives in blender/: no module of it is left loose at the root.
    loose = ("simulation.py", "deformation.py", "levels.py", "handlers.py", "presets.py", "properties.py")
    assert not [n for n in names if n in loose or n.startswith(("collision/", "presets/"))]


def test_installing_the_zip_enables_the_add_on_with_its_solver(addon):
    assert addon_utils.check(MODULE) == (True, True)
    assert MODULE in bpy.context.preferences.addons
    core = importlib.import_module(MODULE + ".core")
    assert core.Surface.__module__ == MODULE + ".core.solver"


def test_the_add_on_disables_and_enables_cleanly(addon):
    bpy.ops.preferences.addon_disable(module=MODULE)
    assert addon_utils.check(MODULE)[1] is False
    bpy.ops.preferences.addon_enable(module=MODULE)
    assert addon_utils.check(MODULE) == (True, True)
