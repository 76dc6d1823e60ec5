"""Blender tests: the extension is built, installed and enabled as a user would do it.

Blender's user folder points at a temporary directory, so tests never touch a real
configuration. It must be set before ``bpy`` is first imported.
"""

import os
import sys
import tempfile
from pathlib import Path

import pytest

os.environ["BLENDER_USER_RESOURCES"] = tempfile.mkdtemp(prefix="collision_response_user_")

import bpy

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))
from build_extension import build

MODULE = "bl_ext.user_default.collision_response"


@pytest.fixture(scope="session")
def extension_zip(tmp_path_factory) -> Path:
    """The extension built and validated by Blender's own tool."""
    return build(tmp_path_factory.mktemp("build"))


@pytest.fixture(scope="session")
def addon(extension_zip):
    """The add-on installed from its zip and enabled, as Preferences > Get Extensions does."""
    result = bpy.ops.extensions.package_install_files(
        filepath=str(extension_zip), repo="user_default", enable_on_install=True
    )
    assert result == {"FINISHED"}
    return sys.modules[MODULE]
