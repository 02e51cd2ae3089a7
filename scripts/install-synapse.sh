#!/usr/bin/env bash
# Installs the Matrix homeserver Synapse (matrix-synapse, pinned) into a private virtualenv for the
# Matrix adapter's tests in crates/chat (one Synapse on loopback serves a test run, started with
# this interpreter). Idempotent. The last line printed on stdout is the absolute path of the
# venv's `python`, e.g.
#
#   export TEAMCOMM_TEST_SYNAPSE_PYTHON="$(scripts/install-synapse.sh | tail -n1)"
#
# Environment:
#   TEAMCOMM_TEST_SYNAPSE_VENV  venv directory (default: $HOME/.cache/teamcomm-synapse-venv)
#   PYTHON                      interpreter used to create the venv (default: python3)
set -euo pipefail

# shellcheck source=scripts/lib/pinned-venv.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/pinned-venv.sh"

pinned_venv_install install-synapse matrix-synapse 1.163.2 \
    "${TEAMCOMM_TEST_SYNAPSE_VENV:-$HOME/.cache/teamcomm-synapse-venv}"
echo "$PINNED_VENV/bin/python"
