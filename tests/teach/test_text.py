"""The words of the dashboard (attnviz.teach.text): every template formats, its fields are the
documented ones, and each page's file, widget keys and text namespace share one name.

Conventions checked here (written down in attnviz/teach/text/__init__.py):

* every namespace has ``FIELDS = {"CONSTANT": ("field", ...)}`` naming the ``str.format`` fields
  of each template (for a dict or tuple constant: the fields of all its strings, in order of
  first appearance), and nothing else;
* the comment lines right above a template (or a trailing comment on its first line) name each
  of its fields as ``{field}``;
* strings holding LaTeX (a ``\\command``, ``_{`` or ``^{``) are formulas for ``st.latex``, never
  templates; every other string's braces are format fields.
"""

from __future__ import annotations

import ast
import importlib
import io
import pkgutil
import re
import string
import subprocess
import sys
import tokenize
from pathlib import Path

import pytest

import attnviz.teach.text as text_package

ROOT = Path(__file__).resolve().parents[2]
LATEX = re.compile(r"\\[A-Za-z]+|[_^]\{")
NAMESPACES = sorted(m.name for m in pkgutil.iter_modules(text_package.__path__))


def namespace(name: str):
    return importlib.import_module(f"attnviz.teach.text.{name}")


def constants(module) -> dict[str, object]:
    """The module's public constants (upper-case names), FIELDS excluded."""
    return {k: v for k, v in vars(module).items() if k.isupper() and k != "FIELDS"}


def strings(value) -> list[str]:
    """Every string inside a constant (dict values, tuple and list items, recursively)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in strings(v)]
    if isinstance(value, (tuple, list)):
        return [s for v in value for s in strings(v)]
    return []


def fields_of(value) -> tuple[str, ...]:
    """The format fields of a constant's non-LaTeX strings, in order of first appearance."""
    found: list[str] = []
    for s in strings(value):
        if LATEX.search(s):
            continue
        for _, field, _, _ in string.Formatter().parse(s):
            if field is not None and field not in found:
                found.append(field)
    return tuple(found)


def comments_above(module, name: str) -> str:
    """The comment lines right above ``name = ...`` and a trailing comment on its line."""
    source = Path(module.__file__).read_text(encoding="utf-8").splitlines()
    node = next(n for n in ast.parse("\n".join(source)).body
                if isinstance(n, ast.Assign) and isinstance(n.targets[0], ast.Name)
                and n.targets[0].id == name)
    lines = []
    i = node.lineno - 2
    while i >= 0 and source[i].lstrip().startswith("#"):
        lines.append(source[i])
        i -= 1
    tokens = tokenize.generate_tokens(io.StringIO(source[node.lineno - 1] + "\n").readline)
    try:
        lines += [t.string for t in tokens if t.type == tokenize.COMMENT]
    except tokenize.TokenError:  # a first line that opens a bracket closed further down
        pass
    return "\n".join(lines)


def test_every_namespace_is_found():
    assert {"common", "home", "masks", "positional_encoding", "encoder_decoder", "pitfalls",
            "why_sqrt_dk", "line_view", "quiz", "share", "your_attention", "playground",
            "step_by_step", "multi_head", "trace", "compare"} <= set(NAMESPACES)


@pytest.mark.parametrize("name", NAMESPACES)
def test_fields_are_documented_exactly(name):
    module = namespace(name)
    declared = module.FIELDS
    found = {k: f for k, v in constants(module).items() if (f := fields_of(v))}
    assert set(declared) <= set(constants(module)), "FIELDS names a constant that does not exist"
    for key in sorted(set(found) | set(declared)):
        assert found.get(key, ()) == tuple(declared.get(key, ())), (
            f"{name}.{key}: the template's fields {found.get(key, ())} and FIELDS "
            f"{declared.get(key, ())} disagree")


@pytest.mark.parametrize("name", NAMESPACES)
def test_a_comment_names_each_field(name):
    module = namespace(name)
    for key, fields in module.FIELDS.items():
        comment = comments_above(module, key)
        missing = [f for f in fields if "{" + f + "}" not in comment]
        assert not missing, f"{name}.{key}: no comment above it says what {missing} are"


@pytest.mark.parametrize("name", NAMESPACES)
def test_every_template_formats_without_leftover_braces(name):
    module = namespace(name)
    for key, fields in module.FIELDS.items():
        values = dict.fromkeys(fields, 7)  # an int passes every spec used: ,  .3g  .1e  .4f
        for template in strings(getattr(module, key)):
            if LATEX.search(template):
                continue
            result = template.format(**values)
            assert "{" not in result and "}" not in result, (key, result)
            for field in fields:
                assert "{" + field not in result


@pytest.mark.parametrize("name", NAMESPACES)
def test_plain_strings_have_no_stray_braces(name):
    """A string that is neither a template nor LaTeX holds no brace (a forgotten f-prefix or a
    template nobody formats would show its braces on screen)."""
    module = namespace(name)
    for key, value in constants(module).items():
        if key in module.FIELDS:
            continue
        for s in strings(value):
            assert LATEX.search(s) or ("{" not in s and "}" not in s), (key, s)


def test_import_attnviz_loads_no_text_module():
    code = "import sys, attnviz; print([m for m in sys.modules if 'teach' in m])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=ROOT, env={"PYTHONPATH": str(ROOT), "PATH": ""})
    assert out.stdout.strip() == "[]"


def test_the_package_itself_defines_no_strings():
    """Pages name their namespace: nothing is re-exported from attnviz.teach.text."""
    assert not constants(text_package)


# --- One name per page ------------------------------------------------------------------------

TABLE_ROW = re.compile(r"^(pages/\w+\.py)\s+``(\w+)``\s+``(\w+)``\s+(\S+)", re.M)


def page_table() -> list[tuple[str, str, str, str]]:
    """(file, key prefix, namespace, url) from the package docstring's table."""
    return TABLE_ROW.findall(text_package.__doc__)


KEYED_HELPERS = {"token_controls", "size_controls", "embedding_editor", "weight_editors",
                 "variant_picker", "settings_controls", "require_projection",
                 "head_count_control", "head_mix_editor"}  # attnviz.ui: keys = prefix + "_..."


def widget_keys(path: Path) -> list[str]:
    """The literal start of every ``key=`` argument in a page (f-strings: up to the first field),
    and the prefix given to the attnviz.ui helpers that build their widget keys from it."""
    keys = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.keyword) and node.arg == "key":
            v = node.value
            if isinstance(v, ast.Constant) and isinstance(v.value, str):
                keys.append(v.value)
            elif isinstance(v, ast.JoinedStr) and isinstance(v.values[0], ast.Constant):
                keys.append(v.values[0].value)
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr in KEYED_HELPERS and node.args
                and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            keys.append(node.args[0].value + "_")
    return keys


def test_the_table_lists_every_page_once():
    rows = page_table()
    assert sorted(f for f, *_ in rows) == sorted(
        str(p.relative_to(ROOT)) for p in (ROOT / "pages").glob("*.py"))
    app = (ROOT / "app.py").read_text(encoding="utf-8")
    for f, *_ in rows:
        assert f'st.Page("{f}"' in app  # the URL path is the file's stem: links keep working


@pytest.mark.parametrize("row", page_table(), ids=lambda r: r[0])
def test_file_keys_and_namespace_share_one_name(row):
    file, prefix, ns, _ = row
    stem = Path(file).stem
    keys = widget_keys(ROOT / file)
    assert keys, f"{file} has no widget key"
    wrong = [k for k in keys if not (k.startswith(prefix) or k == prefix[:-1])]
    assert not wrong, f"{file}: keys without the prefix {prefix}: {wrong}"
    assert prefix == f"{stem}_" and ns == stem
    source = (ROOT / file).read_text(encoding="utf-8")
    if "text." in source:  # (a page whose words all come from its ui modules has no import)
        assert f"from attnviz.teach.text import {stem} as text" in source
    assert "from attnviz.teach import text" not in source
    assert not re.search(r"from attnviz\.teach\.text import (\w+) as text", source) or \
        f"from attnviz.teach.text import {stem} as text" in source  # never another page's


# --- One vocabulary ---------------------------------------------------------------------------

# The shape symbols of attnviz's vocabulary (its module docstring), and the few the words add:
# n_layers (uploaded stacks), batch and 1 (quoting seed notebooks' shapes).
VOCABULARY = ("t", "t_q", "t_k", "d_model", "d_k", "d_v", "n_heads")
EXTRA_SHAPE_SYMBOLS = ("n_layers", "batch")
TUPLE = re.compile(r"\(([^()]*,[^()]*)\)")


def test_the_vocabulary_is_the_one_attnviz_writes_down():
    import attnviz

    for symbol in VOCABULARY:
        assert re.search(rf"\b{symbol}\b", attnviz.__doc__), symbol


@pytest.mark.parametrize("name", NAMESPACES)
def test_shapes_in_the_words_use_the_vocabulary(name):
    """A parenthesised tuple naming a vocabulary size, e.g. "(n_heads, t, t)", is a shape: all
    its sizes are vocabulary symbols (no "heads", "seq_len")."""
    allowed = set(VOCABULARY) | set(EXTRA_SHAPE_SYMBOLS)
    module = namespace(name)
    for key, value in constants(module).items():
        for s in strings(value):
            if LATEX.search(s):
                continue
            for inside in TUPLE.findall(s):
                items = [i.strip() for i in inside.split(",") if i.strip()]
                if any(i in VOCABULARY for i in items):
                    wrong = [i for i in items if i not in allowed and not i.isdigit()]
                    assert not wrong, f"{name}.{key}: ({inside}) uses {wrong}"


# --- No literal messages in pages and ui -------------------------------------------------------

# A call's first argument, or one of these keywords, is shown to the user.
SHOWN_ARGUMENT_OF = {"title", "header", "subheader", "caption", "markdown", "text", "write",
                     "info", "warning", "error", "success", "toast", "metric", "expander",
                     "radio", "slider", "selectbox", "multiselect", "number_input",
                     "select_slider", "toggle", "button", "file_uploader", "download_button",
                     "checkbox", "text_input", "tabs", "matrix_panel", "matrix_editor"}
SHOWN_KEYWORDS = {"label", "help", "title", "x_title", "y_title", "caption", "explanation",
                  "name", "placeholder", "notes"}
NOT_SHOWN_KEYWORDS = {"key", "mime", "file_name", "type", "language", "format", "on_change",
                      "width", "kind", "vertical_alignment", "gap", "mode", "hoverinfo",
                      "tickmode", "texttemplate", "hovertemplate", "colorscale",
                      "selection_mode", "layout", "orientation", "textposition"}
WORDS = re.compile(r"[A-Za-z]{2,}.*\s.*[A-Za-z]{2,}|[A-Za-z]{2,} |\s[A-Za-z]{2,}", re.S)
LATEX_COMMAND = re.compile(r"\\[A-Za-z]+")  # \times, \frac: markup, not words


def literal_messages(path: Path) -> list[tuple[int, str]]:
    """String literals of a module that read as words shown to the user: a str constant or an
    f-string (not a docstring, an exception or a log message, a key, a subscript, CSS or bare
    HTML) that holds two words (LaTeX commands such as ``\\times`` are not words; what a
    ``\\text{...}`` holds is), or that is the first argument of a Streamlit element or a shown
    keyword (label=, help=, title= ...) and holds a letter."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    parents = {id(c): n for n in ast.walk(tree) for c in ast.iter_child_nodes(n)}
    docstrings = {id(n.body[0].value) for n in ast.walk(tree)
                  if isinstance(n, (ast.Module, ast.FunctionDef, ast.ClassDef))
                  and n.body and isinstance(n.body[0], ast.Expr)}
    in_fstring = {id(v) for n in ast.walk(tree) if isinstance(n, ast.JoinedStr)
                  for v in ast.walk(n) if v is not n}

    def hidden(node) -> bool:
        while id(node) in parents:
            parent = parents[id(node)]
            if isinstance(parent, ast.keyword) and parent.arg in NOT_SHOWN_KEYWORDS:
                return True
            if isinstance(parent, ast.Subscript) and parent.slice is node:
                return True
            if isinstance(parent, ast.Raise):
                return True
            if (isinstance(parent, ast.Call) and isinstance(parent.func, ast.Attribute)
                    and "log" in ast.unparse(parent.func.value).lower()):
                return True  # a log message, for the server's console
            node = parent
        return False

    def shown_slot(node) -> bool:
        parent = parents.get(id(node))
        if isinstance(parent, ast.keyword):
            return parent.arg in SHOWN_KEYWORDS
        if isinstance(parent, ast.Call) and parent.args and parent.args[0] is node:
            func = parent.func
            return getattr(func, "attr", getattr(func, "id", "")) in SHOWN_ARGUMENT_OF
        return False

    found = []
    for node in ast.walk(tree):
        if id(node) in docstrings or id(node) in in_fstring:
            continue
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            s = node.value
        elif isinstance(node, ast.JoinedStr):
            s = "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)
        else:
            continue
        bare = re.sub(r"<[^>]*>|\{\}", "", s).strip()
        if not bare or s.startswith("_") or "<style" in s or hidden(node):
            continue
        if WORDS.search(LATEX_COMMAND.sub("", s)) or (shown_slot(node)
                                                      and re.search(r"[A-Za-z]", s)):
            found.append((node.lineno, s))
    return found


PAGES = [f for f, *_ in page_table()]
UI_MODULES = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "attnviz" / "ui").glob("*.py"))


@pytest.mark.parametrize("file", PAGES + UI_MODULES)
def test_pages_and_ui_hold_no_literal_messages(file):
    assert literal_messages(ROOT / file) == []


def test_the_literal_finder_finds_messages(tmp_path):
    page = tmp_path / "page.py"
    page.write_text('import streamlit as st\nst.header("Masks")\n'
                    'st.caption(f"{n} tokens shown")\nst.slider("d_k", key="x_d_k")\n'
                    'st.session_state["some key here"] = 1\n'
                    'st.latex(rf"{a} \\times {b} = {c}")\n'
                    'st.latex(rf"\\sum(\\text{{{n} terms}})")\n', encoding="utf-8")
    assert [line for line, _ in literal_messages(page)] == [2, 3, 4, 7]


def test_home_describes_every_page_of_the_app():
    import re

    from attnviz.teach.text import home
    app = (ROOT / "app.py").read_text()
    titles = re.findall(r'st\.Page\("pages/\w+\.py", title="([^"]+)"', app)
    assert set(titles) - {"Home"} == set(home.PAGES_OVERVIEW)
