#!/usr/bin/env bash
# Install everything and run the whole attnviz test suite on a fresh Debian machine.
#
#   bash tests/run_all.sh [pytest args...]
#
# Needs Debian or Ubuntu, Python 3.11 with pip, apt-get, and root or sudo. Everything Python is
# installed into virtual environments of the repository's own (never into the interpreter
# itself), so the distribution's own python3 works too (PEP 668 refuses a system-wide pip
# install there). Steps:
#   1. Debian's chromium and nginx via apt-get if missing (the browser tests drive chromium
#      through Playwright's executable_path; `playwright install` is never run: it downloads a
#      browser and fails offline; nginx fronts several servers in tests/pages/test_classroom.py),
#      and python3-venv when the interpreter cannot make a virtual environment (stock Ubuntu);
#   2. the core tests (tests/core, tests/scenarios, tests/io, tests/teach) in a virtual
#      environment that has numpy and scipy only (+ pytest, pytest-xdist, hypothesis, threadpoolctl and the
#      package without its `ui` extra), made once in .venv-core/ (CORE_VENV chooses another
#      place), on two processes: proves they need no Streamlit, Plotly or pandas (tests that
#      need torch skip there by design);
#   3. pip install requirements-dev.txt and the package itself (editable) into .venv/, the
#      quick start's virtual environment (TEST_VENV chooses another place), made if missing;
#   4. ruff check, then the whole suite with pytest (extra arguments go to this pytest),
#      including the tests the default `python -m pytest` leaves out (pyproject.toml's addopts):
#      the benchmark smoke tests (marker `bench`) and the wheel install test (marker `install`);
#      the core folders' tests that passed in step 2 are not run twice (only those needing
#      torch or transformers run here); the tests without a browser, then the browser tests,
#      each on two processes (pytest-xdist); each run lists its 15 slowest tests.
# Exits non-zero if any step fails, including when a pytest collects no tests (exit code 5).
# Set PYTHON to choose the interpreter that makes the virtual environments (default: python3,
# else python).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

PYTHON="${PYTHON:-$(command -v python3 || command -v python || echo python3)}"

section() { printf '\n==== %s ====\n' "$*"; }

# run pytest; a failure (exit code 5 = nothing collected, too) stops the script with a message
run_pytest() {
    local status=0
    "$@" || status=$?
    if [[ $status -eq 5 ]]; then
        echo "FAILED: pytest collected no tests (exit code 5)" >&2
    elif [[ $status -ne 0 ]]; then
        echo "FAILED: pytest exit code $status" >&2
    fi
    return "$status"
}

section "1/5 System packages: /usr/bin/chromium, nginx"
MISSING=()
[[ -x /usr/bin/chromium ]] || MISSING+=(chromium)
[[ -x /usr/sbin/nginx ]] || MISSING+=(nginx)  # tests/pages/test_classroom.py: the class proxy
# a Debian/Ubuntu python3 without its venv module (ensurepip) cannot make .venv-core or .venv
"$PYTHON" -c "import ensurepip, venv" 2>/dev/null || MISSING+=(python3-venv)
if [[ ${#MISSING[@]} -gt 0 ]]; then
    SUDO=""
    if [[ "$(id -u)" -ne 0 ]]; then SUDO="sudo"; fi
    echo "not found: installing Debian's ${MISSING[*]} with apt-get"
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -o DPkg::Lock::Timeout=300 \
        "${MISSING[@]}"
fi
# (Debian's launcher may print a harmless "[: ... unexpected operator" from /etc/chromium.d/dev-shm)
/usr/bin/chromium --version

section "2/5 Core tests with numpy and scipy only (${CORE_VENV:=.venv-core})"
if [[ ! -x "$CORE_VENV/bin/python" ]]; then
    "$PYTHON" -m venv "$CORE_VENV"
fi
# the same bounds as the full install: pytest, pytest-xdist and hypothesis from
# requirements-dev.txt (without their comments), numpy and scipy from pyproject.toml's
# dependencies (the package without its `ui` extra)
mapfile -t TEST_TOOLS < <(grep -E '^(pytest|pytest-xdist|hypothesis)[<>=! ]' requirements-dev.txt \
    | sed -E 's/[[:space:]]*#.*//')
# threadpoolctl (pure Python, no ui): the shipped induction model's byte-for-byte test reads
# which BLAS kernel runs (tests/io/test_induction_model.py)
mapfile -t -O "${#TEST_TOOLS[@]}" TEST_TOOLS < <(grep -E '^threadpoolctl[<>=! ]' requirements.txt \
    | sed -E 's/[[:space:]]*#.*//')
"$CORE_VENV/bin/python" -m pip install --disable-pip-version-check -q "${TEST_TOOLS[@]}"
"$CORE_VENV/bin/python" -m pip install --disable-pip-version-check -q -e .
if "$CORE_VENV/bin/python" -c "import streamlit" 2>/dev/null \
        || "$CORE_VENV/bin/python" -c "import plotly" 2>/dev/null \
        || "$CORE_VENV/bin/python" -c "import pandas" 2>/dev/null; then
    echo "FAILED: $CORE_VENV must not have streamlit, plotly or pandas" >&2
    exit 1
fi
# two processes (pytest-xdist): 61 -> 51 s and 82 -> 70 s here beside others' jobs (load 3)
run_pytest "$CORE_VENV/bin/python" -m pytest -p no:cacheprovider -n 2 \
    tests/core tests/scenarios tests/io tests/teach

section "3/5 Python packages in ${TEST_VENV:=.venv} ($("$PYTHON" --version 2>&1))"
if [[ ! -x "$TEST_VENV/bin/python" ]]; then
    "$PYTHON" -m venv "$TEST_VENV"
fi
PY="$TEST_VENV/bin/python"  # every later step runs here, not in the interpreter itself
"$PY" -m pip install --disable-pip-version-check -r requirements-dev.txt
"$PY" -m pip install --disable-pip-version-check -e .

section "4/5 Lint: ruff check ."
"$PY" -m ruff check .

# every test: this -m replaces addopts' "not bench and not install" (a -m given in the
# arguments replaces this one in turn)
EVERY_TEST="bench or install or not (bench or install)"

section "5/5 Tests: pytest -m \"$EVERY_TEST\" $*"
# the core folders' tests that need no optional extra passed in step 2 already: left out here
# (tests/conftest.py, ATTNVIZ_CORE_PASSED); their torch/transformers tests run here. Two
# processes each (pytest-xdist): the tests without a browser, then the browser tests, a file at a
# time on each process (each process has its own server and Chromium; a file's tests share its
# fixtures). Measured on CI before session 22: 3 min 36 s and 12 min 40 s (25 min for the same
# tests one at a time); session 22 ran the browser tests that reopened the same page and state
# as steps of one session (benchmarks/RESULTS.md, "Test suite wall time").
export ATTNVIZ_CORE_PASSED=1
run_pytest "$PY" -m pytest -n 2 -m "($EVERY_TEST) and not browser" --durations=15 "$@"
# the browser files in tests/browser/conftest.py's order, heaviest first (FILE_SECONDS), not
# pytest-xdist's own (most tests first)
run_pytest "$PY" -m pytest -n 2 --dist loadfile --no-loadscope-reorder \
    -m "($EVERY_TEST) and browser" --durations=15 "$@"
echo "OK: core tests without the ui, lint and the whole suite passed"
