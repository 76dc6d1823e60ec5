# Shared by the tools: find Python 3.11 (the bpy wheel's version) and keep virtual
# environments in step with their requirements files.

python311() {
  for candidate in python3.11 python3; do
    if command -v "$candidate" >/dev/null && "$candidate" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))'; then
      echo "$candidate"; return
    fi
  done
  if command -v apt-get >/dev/null; then  # Debian 12's Python is 3.11
    echo "Installing Python 3.11 with apt-get..." >&2
    apt-get update -qq >&2 && apt-get install -y -qq python3.11 python3.11-venv >&2
    echo python3.11; return
  fi
  echo "Python 3.11 is needed (bpy 5.0.1 is built for it) and was not found." >&2
  exit 1
}

# ensure_venv DIR REQUIREMENTS: create DIR if missing and install REQUIREMENTS when they changed.
ensure_venv() {
  local dir=$1 requirements=$2 stamp
  stamp="$dir/.requirements.sha256"
  if [ ! -x "$dir/bin/python" ]; then
    "$(python311)" -m venv "$dir"
  fi
  if ! sha256sum --status -c "$stamp" 2>/dev/null; then
    echo "Installing $requirements into $dir..." >&2
    "$dir/bin/python" -m pip install -q --disable-pip-version-check -r "$requirements"
    sha256sum "$requirements" > "$stamp"
  fi
}
