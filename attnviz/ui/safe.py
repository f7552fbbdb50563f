"""Show user-controlled text literally in elements that render Markdown.

Token labels, a scenario's title and description (which can come from an uploaded file or a
shared link) and uploaded file names are user text. ``st.markdown``, ``st.caption``,
``st.write``, ``st.info``/``st.warning``/``st.error``/``st.success``, ``st.toast`` and widget
labels all render Markdown, plus Streamlit's extensions: emoji shortcodes (``:smile:``),
Material icons (``:material/home:``, which also make the browser fetch an icon font from the
internet), coloured text (``:red[...]``), LaTeX (``$...$``) and GFM autolinks
(``www.example.com``). Raw HTML is never rendered without ``unsafe_allow_html``, which no page
uses with user data (tests/pages/test_hardening.py checks it).

Prefer ``st.text``, ``st.code``, dataframes and plotly axes for user text. Where user text must
sit inside a Markdown sentence, pass it through :func:`md_escape`.
"""

from __future__ import annotations

import re
import string

# CommonMark lets a backslash escape any ASCII punctuation character, and the escaped character
# is then plain text: this covers emphasis, headings, lists, links, images, code, tables, HTML,
# LaTeX dollars, emoji shortcodes, Material icons and coloured-text directives.
_PUNCTUATION = re.compile("([" + re.escape(string.punctuation) + "])")
_ZWSP = "\u200b"  # zero-width space: breaks an autolink without a visible change
_WWW = re.compile(r"(?i)(www)(?=\.)")
_WHITESPACE = re.compile(r"\s+")


def md_escape(text: object) -> str:
    r"""``text`` as Markdown source that Streamlit shows literally, character for character.

    * every ASCII punctuation character is backslash-escaped (``**x**`` stays ``**x**``,
      ``:smile:`` stays ``:smile:``, ``<img ...>`` stays ``<img ...>``);
    * GFM autolinks, which a backslash does not stop, are broken with an invisible zero-width
      space (after ``www``, inside ``://`` and before ``@``), so no link is made;
    * runs of white space become one space, as a browser shows them anyway (a line break or
      four leading spaces could start a heading, a list or a code block).

    Examples
    --------
    >>> print(md_escape("**bold** :smile:"))
    \*\*bold\*\* \:smile\:
    """
    text = _WHITESPACE.sub(" ", str(text))  # as HTML shows it anyway
    text = _WWW.sub(r"\1" + _ZWSP, text)
    text = text.replace("://", ":" + _ZWSP + "//").replace("@", _ZWSP + "@")
    return _PUNCTUATION.sub(r"\\\1", text)


def md_escape_all(texts) -> list[str]:
    """:func:`md_escape` of every item (e.g. a list of token labels)."""
    return [md_escape(t) for t in texts]
