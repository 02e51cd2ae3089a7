#!/usr/bin/env bash
# Installs the Matrix homeserver Synapse (matrix-synapse, pinned) into a private virtualenv for the
# Matrix adapter's tests in crates/chat (each test binary starts its own Synapse on loopback with
# this interpreter). Idempotent: an existing venv with the pinned version is left untouched. The
# last line printed on stdout is the absolute path of the venv's `python`, e.g.
#
#   export TEAMCOMM_TEST_SYNAPSE_PYTHON="$(scripts/install-synapse.sh | tail -n1)"
#
# Environment:
#   TEAMCOMM_TEST_SYNAPSE_VENV  venv directory (default: $HOME/.cache/teamcomm-synapse-venv)
#   PYTHON                 interpreter used to create the venv (default: python3)
set -euo pipefail

VERSION="1.163.2"
PACKAGE="matrix-synapse==${VERSION}"
VENV="${TEAMCOMM_TEST_SYNAPSE_VENV:-$HOME/.cache/teamcomm-synapse-venv}"
PYTHON="${PYTHON:-python3}"

log() { echo "install-synapse: $*" >&2; }

if ! command -v "$PYTHON" >/dev/null 2>&1; then
    log "$PYTHON not found; install Python 3 first"
    exit 1
fi

mkdir -p "$(dirname "$VENV")"
VENV="$(cd "$(dirname "$VENV")" && pwd)/$(basename "$VENV")"
BIN="$VENV/bin/python"

installed_version() {
    [ -x "$BIN" ] || return 1
    # Reads the installed distribution's metadata: much faster than importing synapse.
    "$BIN" -c 'import importlib.metadata as m; print(m.version("matrix-synapse"))' 2>/dev/null
}

if [ "$(installed_version || true)" = "$VERSION" ]; then
    log "matrix-synapse $VERSION already installed in $VENV"
    echo "$BIN"
    exit 0
fi

make_venv() {
    "$PYTHON" -m venv "$VENV"
}

if [ ! -x "$VENV/bin/python" ] || [ ! -x "$VENV/bin/pip" ]; then
    # A half-created venv (e.g. ensurepip missing last time) is rebuilt from scratch.
    rm -rf "$VENV"
    log "creating venv at $VENV"
    if ! make_venv >&2; then
        rm -rf "$VENV"
        if command -v apt-get >/dev/null 2>&1; then
            SUDO=""
            if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
            pyver="$("$PYTHON" -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')"
            log "python3 -m venv failed; installing python3-venv with apt-get"
            $SUDO apt-get update >&2
            # The versioned package carries ensurepip on newer Debian; not every release has it.
            DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y python3-venv >&2
            DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y "python${pyver}-venv" >&2 || true
            make_venv >&2
        else
            log "python3 -m venv failed and apt-get is not available; install the venv module"
            exit 1
        fi
    fi
fi

log "installing $PACKAGE"
"$VENV/bin/python" -m pip install --disable-pip-version-check --quiet "$PACKAGE" >&2

got="$(installed_version || true)"
if [ "$got" != "$VERSION" ]; then
    log "expected matrix-synapse $VERSION in $VENV, found '${got:-nothing}'"
    exit 1
fi
log "matrix-synapse $VERSION installed in $VENV"
echo "$BIN"
