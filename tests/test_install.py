"""``pip install .`` (not editable) gives a package that starts the dashboard.

The working tree's files (tracked and new, as ``git ls-files`` lists them) are copied to a
temporary folder, built into a wheel there (``pip wheel --no-build-isolation``: nothing is
downloaded) and installed with ``--no-deps`` into a fresh virtual environment made with
``--system-site-packages``, so Streamlit, Plotly and numpy come from this interpreter's
installation while ``attnviz`` comes from the wheel. Everything then runs from a folder that is
not the repository. Marked ``install`` (about 30 s): off the default developer run, run by
``tests/run_all.sh`` (CI).
"""

from __future__ import annotations

import os
import shutil
import site
import subprocess
import sys
import textwrap
import urllib.request
import zipfile
from pathlib import Path

import pytest
from launched import stop_group, wait_healthy

from attnviz.classroom import free_port

pytestmark = pytest.mark.install

ROOT = Path(__file__).resolve().parents[1]
HEALTH_TIMEOUT_S = 90.0


def working_tree_files() -> list[str]:
    """The checkout's files as a fresh clone with the current edits would hold them."""
    out = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                         cwd=ROOT, capture_output=True, check=True).stdout.decode()
    return [f for f in out.split("\0") if f and (ROOT / f).is_file()]


def package_data_files() -> list[str]:
    """Every file of the ``attnviz`` package that is not Python source (read at run time)."""
    return [f for f in working_tree_files()
            if f.startswith("attnviz/") and not f.endswith(".py") and "__pycache__" not in f]


def dashboard_files() -> list[str]:
    """The files the launcher runs, which the wheel carries as ``attnviz/_dashboard/``."""
    return ["app.py", ".streamlit/config.toml",
            *(f for f in working_tree_files() if f.startswith("pages/") and f.endswith(".py"))]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel built from a copy of the working tree."""
    base = tmp_path_factory.mktemp("wheel")
    src = base / "src"
    for rel in working_tree_files():
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / rel, src / rel)
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", str(src), "--no-deps",
                           "--no-build-isolation", "--disable-pip-version-check", "-q",
                           "-w", str(base / "dist")], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    (found,) = (base / "dist").glob("attnviz-*.whl")
    return found


@pytest.fixture(scope="module")
def venv_python(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtual environment's python with the wheel installed (and nothing else)."""
    venv = tmp_path_factory.mktemp("venv")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True,
                   timeout=120)
    python = venv / "bin" / "python"
    # this interpreter's packages (numpy, streamlit, pip, ...) behind the venv's own: a venv
    # made from a venv (tests/run_all.sh's .venv) would see only the base interpreter's with
    # --system-site-packages. Named in a .pth: added to the path, their own .pth files (this
    # checkout's editable install) are not run, so attnviz comes from the wheel alone.
    purelib = subprocess.run([str(python), "-c", "import sysconfig; "
                              "print(sysconfig.get_paths()['purelib'])"], capture_output=True,
                             text=True, check=True, timeout=60).stdout.strip()
    Path(purelib, "outer_site_packages.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    proc = subprocess.run([str(python), "-m", "pip", "install", "--no-deps",
                           "--disable-pip-version-check", "-q", str(wheel)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return python


@pytest.fixture
def elsewhere(tmp_path: Path) -> Path:
    """A working folder that is not the repository (no checkout files to fall back on)."""
    folder = tmp_path / "elsewhere"
    folder.mkdir()
    return folder


def run_python(python: Path, code: str, cwd: Path, timeout: float = 180) -> str:
    """Run ``code`` with ``python`` in ``cwd`` (no PYTHONPATH); its stdout, failing on an error."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run([str(python), "-c", textwrap.dedent(code)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


def test_the_wheel_holds_every_data_file_and_the_dashboard(wheel: Path):
    names = set(zipfile.ZipFile(wheel).namelist())
    data = package_data_files()
    assert "attnviz/ui/grid.css" in data  # the file a plain install once lacked
    assert not [f for f in data if f not in names], "package data missing from the wheel"
    dashboard = dashboard_files()
    assert "pages/playground.py" in dashboard
    assert not [f for f in dashboard if f"attnviz/_dashboard/{f}" not in names]


def test_the_installed_package_is_imported_from_the_venv(venv_python: Path, elsewhere: Path):
    out = run_python(venv_python, """
        import attnviz, attnviz.launch, attnviz.ui.grid
        print(attnviz.__file__)
        print(attnviz.launch.dashboard_root())
    """, elsewhere)
    package, dashboard = (Path(line) for line in out.split())
    venv = venv_python.parent.parent
    assert package.is_relative_to(venv) and not package.is_relative_to(ROOT), package
    assert dashboard == package.parent / "_dashboard"


def test_the_installed_app_runs_its_pages(venv_python: Path, elsewhere: Path):
    """The installed frame and pages run (AppTest, in the venv): the Home page and the
    Playground (its modules read grid.js, grid.css and plotly_view.js)."""
    out = run_python(venv_python, """
        from attnviz import launch
        from streamlit.testing.v1 import AppTest
        at = AppTest.from_file(str(launch.dashboard_root() / "app.py"), default_timeout=120)
        at.run()
        assert not at.exception, [e.message for e in at.exception]
        at.switch_page("pages/playground.py").run()
        assert not at.exception, [e.message for e in at.exception]
        print(len(at.get("plotly_chart")) + len(at.get("bidi_component")))
    """, elsewhere)
    assert int(out) >= 1  # the Playground drew its charts (a chart component or plotly_chart)


def test_python_m_attnviz_serves_the_installed_app(venv_python: Path, elsewhere: Path):
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.Popen([str(venv_python), "-m", "attnviz", "--server.port", str(port),
                             "--server.headless", "true"], cwd=elsewhere, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            start_new_session=True)
    try:
        wait_healthy(proc, port, timeout=HEALTH_TIMEOUT_S)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=10) as r:
            assert r.status == 200 and b"<title>" in r.read()
        # the launcher became the server (execve): its command line names the installed copy
        cmdline = Path(f"/proc/{proc.pid}/cmdline").read_bytes().split(b"\0")
        app = Path(cmdline[cmdline.index(b"run") + 1].decode())
        assert app.is_relative_to(venv_python.parent.parent), app
        assert app.name == "app.py" and app.parent.name == "_dashboard"
    finally:
        stop_group(proc)  # the process group this test started
    out = proc.stdout.read().decode()
    assert f"http://127.0.0.1:{port}" in out  # the installed .streamlit/config.toml: loopback
