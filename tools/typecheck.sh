#!/usr/bin/env bash
# Type-check the add-on as the package it is once installed (collision_response): its
# modules import each other relatively, and the repository folder may have any name.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
ln -s "$PWD" "$root/collision_response"
cd "$root" && MYPYPATH="$root" "$OLDPWD/.venv/bin/mypy" --config-file "$OLDPWD/pyproject.toml" -p collision_response
