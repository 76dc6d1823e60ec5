#!/usr/bin/env bash
# Install what the checks need (first run, or when a requirements file changed) and run
# them all: lint, type check, every test in real Blender (the bpy module), then the solver's
# tests again in an environment holding only numpy and pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
source tools/venv.sh

ensure_venv .venv requirements-dev.txt
.venv/bin/ruff check .
.venv/bin/ruff format --check .
bash tools/typecheck.sh
.venv/bin/python -m pytest "$@"   # exits 5 (a failure here) if it collected no test

ensure_venv .venv-core requirements-core.txt
.venv-core/bin/python -m pytest tests/core -q
