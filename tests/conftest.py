"""Shared test set-up: make tests/ importable (apptest_helpers, reference) for every test module,
and the Hypothesis profile every property test runs with.

No Streamlit module is imported here, so the core, scenario, io and teach tests collect and run
without Streamlit installed, and a Streamlit upgrade that moves an internal can fail only the
few page tests that use one (see ``apptest_helpers``: fragment reruns). Once the collected
modules have imported Streamlit, ``scan_component_manifests_once`` spares every later AppTest
a scan of the installed packages (speed only: if the internal moves, nothing is changed).

Hypothesis profiles (``HYPOTHESIS_PROFILE`` chooses one; ``ci`` by default):

* ``ci`` — the same examples on every run (``derandomize``: the seed is a hash of the test, so
  a suite cannot pass or fail by chance), no example database, a modest ``max_examples``, a
  5 s deadline per example (the one timing check kept; the ``too_slow`` health check is off),
  and no shrink phase: a failing example is reported as found, with
  the ``@reproduce_failure`` blob to replay it (an unbounded shrink once took over five
  minutes). Settings a test gives itself (``max_examples``, ``deadline``) still apply, and
  inherit the rest from this profile; no test module loads a profile of its own (that would
  change the settings of every module collected after it).
* ``dev`` — random examples, the local example database and shrinking, for hunting bugs
  (``HYPOTHESIS_PROFILE=dev python -m pytest tests/core``); replay its finds in ``ci``.
"""

import functools
import os
import sys
import warnings
from datetime import timedelta
from pathlib import Path

from hypothesis import HealthCheck, Phase, settings

sys.path.insert(0, str(Path(__file__).resolve().parent))

settings.register_profile(
    "ci", derandomize=True, database=None, max_examples=50, deadline=timedelta(seconds=5),
    phases=(Phase.explicit, Phase.reuse, Phase.generate), print_blob=True,
    suppress_health_check=[HealthCheck.too_slow])  # a timing check: it would fail by chance
settings.register_profile(
    "dev", parent=settings.get_profile("ci"), derandomize=False,
    database=settings.get_profile("default").database, phases=tuple(Phase))
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


# tests/run_all.sh runs these folders first in a numpy-and-scipy-only environment, then the whole
# suite with everything installed; there, ATTNVIZ_CORE_PASSED=1 leaves out what already passed:
# the tests of these folders that need no optional extra (torch, transformers, tokenizers)
CORE_FOLDERS = ("core", "scenarios", "io", "teach")
_EXTRAS = ('importorskip("torch")', 'importorskip("transformers")', 'importorskip("tokenizers")')


@functools.cache
def _needs_an_extra(path: str) -> bool:
    """True when the test module asks for torch, transformers or tokenizers (for the module or
    one of its tests): in the numpy-only environment those were skipped, so they run here."""
    source = Path(path).read_text(encoding="utf-8")
    return any(extra in source for extra in _EXTRAS)


def pytest_collection_modifyitems(config, items):
    if os.environ.get("ATTNVIZ_CORE_PASSED") != "1":
        return
    root = Path(__file__).resolve().parent
    kept, passed = [], []
    for item in items:
        parts = Path(str(item.fspath)).resolve().relative_to(root).parts
        core = len(parts) > 1 and parts[0] in CORE_FOLDERS
        (passed if core and not _needs_an_extra(str(item.fspath)) else kept).append(item)
    if passed:
        config.hook.pytest_deselected(items=passed)
        items[:] = kept


def scan_component_manifests_once() -> None:
    """Scan the installed packages for Streamlit components once per test process.

    Every new ``AppTest`` makes its own component manager, which reads the metadata of every
    installed distribution (``streamlit.components.v2.manifest_scanner``: about 0.2 s a test at
    load 7, as long as a short AppTest's own runs; ~1,000 AppTests in the suite). The packages
    do not change while the tests run, so the first scan's manifests are kept and each later
    scan gets a copy of that list. This wraps a Streamlit internal (a debt: see STYLE.md); where
    a Streamlit upgrade moved it, nothing is wrapped (with a warning) and the tests only run
    slower."""
    try:
        from streamlit.components.v2 import manifest_scanner
        scan = manifest_scanner.scan_component_manifests
    except (ImportError, AttributeError) as exc:
        warnings.warn(f"Streamlit's component scan not found, every AppTest scans: {exc}",
                      stacklevel=1)
        return
    if getattr(scan, "scanned_once", False):
        return
    first = functools.cache(scan)

    def scanned_once(max_workers: int | None = None) -> list:
        return list(first())

    scanned_once.scanned_once = True
    manifest_scanner.scan_component_manifests = scanned_once


def pytest_collection_finish(session):
    if "streamlit" in sys.modules:  # some collected module uses Streamlit (AppTests)
        scan_component_manifests_once()
