"""A standalone HTML report of a page's figures that opens offline.

The plotly.js bundle is embedded once, inline, with the first figure
(``fig.to_html(include_plotlyjs=True, full_html=False)``); the other figures reuse it
(``include_plotlyjs=False``). Nothing is loaded from the internet: the bundle's only URL (the
default ``topojsonURL`` for geographic maps, which attnviz never draws) is replaced by a local
path, so the report never names a CDN. All user text (titles, notes, captions) is escaped with
:func:`html.escape`; Plotly itself escapes the figure JSON inside its ``<script>``.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from datetime import datetime

import plotly.graph_objects as go

from attnviz.teach.text import common

_CDN = re.compile(r"https?://cdn\.plot\.ly/[^\"'\s]*")
_LOCAL_TOPOJSON = "topojson/"  # never fetched: attnviz draws no geographic maps
_CONFIG = {"displaylogo": False, "responsive": True,
           "toImageButtonOptions": {"format": "svg", "filename": "attnviz_figure"}}
_STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 2rem auto;
       max-width: 1100px; padding: 0 1rem; color: #222; }
h1 { font-size: 1.6rem; margin-bottom: 0.2rem; }
h2 { font-size: 1.15rem; margin: 2rem 0 0.3rem; }
p.meta, p.caption { color: #555; margin: 0.2rem 0; }
section.figure { margin-bottom: 1.5rem; }
"""


def _figure_items(figures) -> list[tuple[str, str, go.Figure]]:
    """Normalise figures, (title, fig) or (title, caption, fig) to (title, caption, fig)."""
    items = []
    for i, item in enumerate(figures):
        if isinstance(item, go.Figure):
            title = item.layout.title.text or ""
            items.append((title or common.REPORT_FIGURE.format(n=i + 1), "", item))
        elif isinstance(item, tuple) and len(item) == 2:
            items.append((str(item[0]), "", item[1]))
        elif isinstance(item, tuple) and len(item) == 3:
            items.append((str(item[0]), str(item[1]), item[2]))
        else:
            raise ValueError(f"figure {i} must be a go.Figure or a (title, figure) pair")
        if not isinstance(items[-1][2], go.Figure):
            raise ValueError(f"figure {i} must be a plotly go.Figure")
    return items


def html_report(figures: Sequence, *, title: str = common.REPORT_TITLE,
                notes: Sequence[str] = ()) -> str:
    """One self-contained HTML document holding every figure, interactive and offline.

    Parameters
    ----------
    figures : sequence of go.Figure, (title, go.Figure) or (title, caption, go.Figure)
    title : str
        The report's heading (escaped).
    notes : sequence of str
        Lines shown under the heading, e.g. the scenario's name (escaped).

    Returns
    -------
    str
        The HTML text; the plotly.js bundle (~4.8 MB) is inlined with the first figure.
    """
    items = _figure_items(figures)
    stamp = datetime.now().strftime("%Y-%m-%d %H:%M")
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{html.escape(title)}</title>",
        f"<style>{_STYLE}</style>",
        "</head>",
        "<body>",
        f"<h1>{html.escape(title)}</h1>",
        f'<p class="meta">{html.escape(common.REPORT_MADE.format(stamp=stamp))}</p>',
    ]
    parts += [f'<p class="meta">{html.escape(str(note))}</p>' for note in notes]
    if not items:
        parts.append(f'<p class="caption">{html.escape(common.REPORT_EMPTY)}</p>')
    for i, (fig_title, caption, fig) in enumerate(items):
        div = fig.to_html(include_plotlyjs=(i == 0), full_html=False, config=_CONFIG,
                          default_width="100%", default_height=f"{fig.layout.height or 450}px")
        parts.append('<section class="figure">')
        parts.append(f"<h2>{html.escape(fig_title)}</h2>")
        if caption:
            parts.append(f'<p class="caption">{html.escape(caption)}</p>')
        parts.append(div)
        parts.append("</section>")
    parts += ["</body>", "</html>", ""]
    return _CDN.sub(_LOCAL_TOPOJSON, "\n".join(parts))


def html_report_bytes(figures: Sequence, *, title: str = common.REPORT_TITLE,
                      notes: Sequence[str] = ()) -> bytes:
    """:func:`html_report` as UTF-8 bytes (for a download button)."""
    return html_report(figures, title=title, notes=notes).encode("utf-8")
