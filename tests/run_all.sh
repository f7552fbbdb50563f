#!/usr/bin/env bash
# Install everything and run the whole attnviz test suite on a fresh Debian machine.
#
#   bash tests/run_all.sh [pytest args...]
#
# Needs Debian, Python 3.11 with pip, apt-get, and root or sudo. Steps:
#   1. Debian's chromium via apt-get if /usr/bin/chromium is missing (the browser tests drive it
#      through Playwright's executable_path; `playwright install` is never run: it downloads a
#      browser and fails offline);
#   2. pip install requirements-dev.txt and the package itself (editable);
#   3. ruff check, then pytest (extra arguments go to pytest).
# Exits non-zero if any step fails, including when pytest collects no tests (exit code 5).
# Set PYTHON to choose the interpreter (default: python, else python3).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

PYTHON="${PYTHON:-$(command -v python || command -v python3 || echo python)}"

section() { printf '\n==== %s ====\n' "$*"; }

section "1/4 System browser: /usr/bin/chromium"
if [[ ! -x /usr/bin/chromium ]]; then
    SUDO=""
    if [[ "$(id -u)" -ne 0 ]]; then SUDO="sudo"; fi
    echo "not found: installing Debian's chromium with apt-get"
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -o DPkg::Lock::Timeout=300 chromium
fi
# (Debian's launcher may print a harmless "[: ... unexpected operator" from /etc/chromium.d/dev-shm)
/usr/bin/chromium --version

section "2/4 Python packages ($("$PYTHON" --version 2>&1))"
"$PYTHON" -m pip install --disable-pip-version-check -r requirements-dev.txt
"$PYTHON" -m pip install --disable-pip-version-check -e .

section "3/4 Lint: ruff check ."
"$PYTHON" -m ruff check .

section "4/4 Tests: pytest $*"
status=0
"$PYTHON" -m pytest "$@" || status=$?
if [[ $status -eq 5 ]]; then
    echo "FAILED: pytest collected no tests (exit code 5)" >&2
elif [[ $status -ne 0 ]]; then
    echo "FAILED: pytest exit code $status" >&2
else
    echo "OK: lint and tests passed"
fi
exit "$status"
