"""The extension as Blender sees it: built, validated, installed, enabled, disabled."""

import importlib
import zipfile

import addon_utils
import bpy
from conftest import MODULE


def test_the_zip_holds_the_add_on_and_no_development_files(extension_zip):
    names = zipfile.ZipFile(extension_zip).namelist()
    assert "blender_manifest.toml" in names and "__init__.py" in names and "core/solver.py" in names
    assert not [n for n in names if n.startswith(("tests/", "tools/", ".ci/", ".venv")) or "__pycache__" in n]


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
