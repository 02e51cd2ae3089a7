#!/usr/bin/env bash
# Installs the vendor's command-line client (dailybot-cli, pinned) into a private virtualenv for the
# end-to-end tests in tests/api/cli/. Idempotent: an existing venv with the pinned version is left
# untouched. The last line printed on stdout is the absolute path of the `dailybot` executable,
# e.g.
#
#   export DAILYBOT_CLI="$(scripts/install-cli.sh | tail -n1)"
#
# Environment:
#   TEAMCOMM_TEST_CLI_VENV  venv directory (default: $HOME/.cache/teamcomm-cli-venv)
#   PYTHON                  interpreter used to create the venv (default: python3)
set -euo pipefail

# shellcheck source=scripts/lib/pinned-venv.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/pinned-venv.sh"

pinned_venv_install install-cli dailybot-cli 3.27.13 \
    "${TEAMCOMM_TEST_CLI_VENV:-$HOME/.cache/teamcomm-cli-venv}"
echo "$PINNED_VENV/bin/dailybot"
