#!/usr/bin/env bash
# Installs the SMTP server aiosmtpd (pinned) into a private virtualenv for the mail adapter's tests
# in crates/mail (each test starts crates/mail/tests/fixtures/smtp_sink.py on loopback with this
# interpreter). Idempotent. The last line printed on stdout is the absolute path of the venv's
# `python`, e.g.
#
#   export TEAMCOMM_TEST_SMTP_PYTHON="$(scripts/install-smtp.sh | tail -n1)"
#
# Environment:
#   TEAMCOMM_TEST_SMTP_VENV  venv directory (default: $HOME/.cache/teamcomm-smtp-venv)
#   PYTHON                   interpreter used to create the venv (default: python3)
set -euo pipefail

# shellcheck source=scripts/lib/pinned-venv.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/pinned-venv.sh"

pinned_venv_install install-smtp aiosmtpd 1.4.6 \
    "${TEAMCOMM_TEST_SMTP_VENV:-$HOME/.cache/teamcomm-smtp-venv}"
echo "$PINNED_VENV/bin/python"
