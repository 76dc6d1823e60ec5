#!/usr/bin/env bash
# The main job: install what is needed, then build the demo scene headless, simulate, bake,
# save out/demo.blend and render out/demo.png. Extra arguments go to tools/demo.py.
set -euo pipefail
cd "$(dirname "$0")/.."
source tools/venv.sh
ensure_venv .venv requirements-dev.txt
.venv/bin/python tools/demo.py "$@"
