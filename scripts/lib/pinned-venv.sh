# Sourced by the scripts/install-*.sh installers: puts one pinned PyPI distribution into a private
# virtualenv, idempotently (a venv that already has the pinned version is left untouched; a
# half-created one is rebuilt). Writes only to stderr.
#
#   pinned_venv_install LOG_NAME DISTRIBUTION VERSION VENV_DIR
#
# On return PINNED_VENV holds the venv's absolute path. PYTHON (default python3) creates the venv.

pinned_venv_install() {
    local log_name="$1" distribution="$2" version="$3" venv="$4"
    local python="${PYTHON:-python3}"
    pinned_venv_log() { echo "$log_name: $*" >&2; }

    if ! command -v "$python" >/dev/null 2>&1; then
        pinned_venv_log "$python not found; install Python 3 first"
        return 1
    fi
    mkdir -p "$(dirname "$venv")"
    venv="$(cd "$(dirname "$venv")" && pwd)/$(basename "$venv")"
    PINNED_VENV="$venv"

    pinned_venv_version() {
        [ -x "$venv/bin/python" ] || return 1
        # The distribution's metadata: much faster than importing the package.
        "$venv/bin/python" -c "import importlib.metadata as m; print(m.version('$distribution'))" 2>/dev/null
    }

    if [ "$(pinned_venv_version || true)" = "$version" ]; then
        pinned_venv_log "$distribution $version already installed in $venv"
        return 0
    fi

    if [ ! -x "$venv/bin/python" ] || [ ! -x "$venv/bin/pip" ]; then
        rm -rf "$venv"
        pinned_venv_log "creating venv at $venv"
        if ! "$python" -m venv "$venv" >&2; then
            rm -rf "$venv"
            if ! command -v apt-get >/dev/null 2>&1; then
                pinned_venv_log "python3 -m venv failed and apt-get is not available; install the venv module"
                return 1
            fi
            local sudo="" pyver
            if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
            pyver="$("$python" -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')"
            pinned_venv_log "python3 -m venv failed; installing python3-venv with apt-get"
            $sudo apt-get update >&2
            # The versioned package carries ensurepip on newer Debian; not every release has it.
            DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y python3-venv >&2
            DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y "python${pyver}-venv" >&2 || true
            "$python" -m venv "$venv" >&2
        fi
    fi

    pinned_venv_log "installing $distribution==$version"
    "$venv/bin/python" -m pip install --disable-pip-version-check --quiet "$distribution==$version" >&2

    local got
    got="$(pinned_venv_version || true)"
    if [ "$got" != "$version" ]; then
        pinned_venv_log "expected $distribution $version in $venv, found '${got:-nothing}'"
        return 1
    fi
    pinned_venv_log "$distribution $version installed in $venv"
}
