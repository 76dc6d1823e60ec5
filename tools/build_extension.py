"""Build the extension zip with Blender's own builder, and validate it.

Usage: python tools/build_extension.py [--output-dir build]
Prints the path of the zip. Needs the ``bpy`` package (it ships ``blender_ext.py``).
"""

import argparse
import importlib.util
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def blender_ext_script() -> Path:
    """Blender's extension command-line tool inside the installed ``bpy`` package."""
    spec = importlib.util.find_spec("bpy")
    if spec is None or spec.origin is None:
        sys.exit("the bpy package is not installed: run tools/test.sh or pip install bpy==5.0.1")
    found = sorted(Path(spec.origin).parent.glob("*/scripts/addons_core/bl_pkg/cli/blender_ext.py"))
    if not found:
        sys.exit(f"blender_ext.py not found under {Path(spec.origin).parent}")
    return found[-1]


def build(output_dir: Path) -> Path:
    """Build and validate the zip; return its path. Raises CalledProcessError on failure."""
    script = blender_ext_script()
    output_dir.mkdir(parents=True, exist_ok=True)
    version = next(
        line.split("=")[1].strip().strip('"')
        for line in (ROOT / "blender_manifest.toml").read_text().splitlines()
        if line.startswith("version")
    )
    zip_path = output_dir / f"collision_response-{version}.zip"
    zip_path.unlink(missing_ok=True)
    run = lambda *args: subprocess.run([sys.executable, str(script), *args], check=True, capture_output=True, text=True)  # noqa: E731
    run("build", "--source-dir", str(ROOT), "--output-filepath", str(zip_path))
    run("validate", str(zip_path))
    return zip_path


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output-dir", type=Path, default=ROOT / "build")
    print(build(parser.parse_args().output_dir))
