"""The README is the front door and says true things: its Python example runs and prints what
it shows, its page table names every page of the app, its picture is there, and every link of
the README and of ``docs/`` leads to a file (and heading) that exists.
"""

from __future__ import annotations

import ast
import contextlib
import io
import re
import struct
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ("api", "files-and-links", "classroom", "security-and-limits", "speed", "contributing")
MARKDOWN = [README, *(ROOT / "docs" / f"{name}.md" for name in DOCS)]
MAX_LINES = 150
MAX_PICTURE_BYTES = 200_000
# the two commands (install + start; install + the whole test suite), exactly as they work
START = ("python3 -m venv .venv && .venv/bin/python -m pip install -r requirements.txt && "
         ".venv/bin/python -m attnviz")
TEST_ALL = "bash tests/run_all.sh"
LINK = re.compile(r"\]\(([^)\s]+)\)")


def readme() -> str:
    return README.read_text(encoding="utf-8")


def python_blocks(markdown: str) -> list[str]:
    """The contents of every fenced ```python block."""
    return re.findall(r"^```python\n(.*?)^```", markdown, flags=re.S | re.M)


def printed_claims(block: str) -> list[str]:
    """What the block says each ``print(...)  # shown`` line prints, in order."""
    return [m.group(1).strip() for m in re.finditer(r"^print\(.*\)\s+# (.*)$", block, re.M)]


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    text = re.sub(r"^```.*?^```", "", path.read_text(encoding="utf-8"), flags=re.S | re.M)
    return {slug(h) for h in re.findall(r"^#+ (.*)$", text, flags=re.M)}


def test_the_readme_is_short():
    assert len(readme().splitlines()) <= MAX_LINES


def test_the_readme_gives_the_two_commands():
    text = readme()
    assert f"```bash\n{START}\n```" in text and f"```bash\n{TEST_ALL}\n```" in text
    assert "tests/run_all.sh" in (ROOT / ".ci" / "run").read_text()  # CI runs the same command


def test_the_test_command_installs_into_virtual_environments_only():
    """A stock Debian or Ubuntu python3 refuses a system-wide ``pip install`` (PEP 668): every
    install of tests/run_all.sh goes into one of its virtual environments, made from that
    python3, never into the interpreter itself."""
    script = (ROOT / "tests" / "run_all.sh").read_text(encoding="utf-8")
    installs = [line.strip() for line in script.splitlines()
                if "pip install" in line and not line.lstrip().startswith("#")]
    assert len(installs) >= 4  # the core venv's tools and package; the test venv's two
    for line in installs:
        assert line.startswith(('"$CORE_VENV/bin/python" -m pip', '"$PY" -m pip')), line
    assert 'PY="$TEST_VENV/bin/python"' in script
    assert '"$PYTHON" -m venv "$TEST_VENV"' in script and '"$PYTHON" -m venv "$CORE_VENV"' in script
    # python3-venv comes with the system packages when the interpreter cannot make one
    assert "python3-venv" in script


def test_the_python_example_runs_and_prints_what_it_shows():
    blocks = python_blocks(readme())
    assert blocks, "the README has a Python example"
    for block in blocks:
        claims = printed_claims(block)
        assert claims, "the example says what it prints"
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(block, "README.md", "exec"), {"__name__": "readme_example"})
        assert out.getvalue().splitlines() == claims


def test_printed_claims_are_read():
    block = "x = 1\nprint(x)  # 1\nprint(x + 1)   # 2\n"
    assert printed_claims(block) == ["1", "2"]


def page_titles() -> list[str]:
    """The title of every ``st.Page`` app.py navigates to."""
    titles = []
    for node in ast.walk(ast.parse((ROOT / "app.py").read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "Page":
            titles += [k.value.value for k in node.keywords if k.arg == "title"]
    return titles


def test_the_page_table_names_every_page():
    rows = re.findall(r"^\|[^|\n]*\| ([^|\n]+?) \|", readme(), flags=re.M)
    titles = page_titles()
    assert len(titles) >= 19
    assert [t for t in titles if t not in rows] == []
    assert [r for r in rows if r in titles] == titles  # in the sidebar's order


def test_the_picture_is_there_and_small():
    (target,) = [t for t in LINK.findall(readme()) if t.endswith(".png")]
    png = (ROOT / target).read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) < MAX_PICTURE_BYTES
    width, height = struct.unpack(">II", png[16:24])
    assert (width, height) == (1366, 768)


@pytest.mark.parametrize("path", MARKDOWN, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_link_leads_somewhere(path: Path):
    assert path.is_file()
    broken = []
    for target in LINK.findall(path.read_text(encoding="utf-8")):
        if re.match(r"[a-z]+:", target):  # http(s), mailto: not checked offline
            continue
        file, _, anchor = target.partition("#")
        dest = (path.parent / file).resolve() if file else path
        if not dest.exists() or (anchor and dest.suffix == ".md" and anchor not in anchors(dest)):
            broken.append(target)
    assert broken == []


def test_slug_follows_github():
    assert slug("Start the dashboard") == "start-the-dashboard"
    assert slug("A large class: several processes behind nginx") == \
        "a-large-class-several-processes-behind-nginx"
