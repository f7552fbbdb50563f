// attnviz's chart geometry, decided in the browser: pure functions of a figure and of sizes
// the chart component measured (the page's width, the window's height, Plotly's drawn axes).
// No DOM here but a canvas to measure text; tests/browser/test_fit_js.py loads this file on
// its own into a blank page and checks each function. The component (plotly_size.js) calls
// them before and after Plotly draws.
//
// Only the browser knows how large a heatmap's cells are drawn (the column's width, the
// screen's height). A figure's layout.meta.attnviz may carry:
//   cellText: [min, max]  the numbers in the cells are written at the largest size that fits
//                         the drawn cells, at most max px; below min px none is written (the
//                         hover still gives every value). Without it: [10, the layout's font].
//   fit: {bottom, rows, minRow, maxRow, below}  the figure's height follows the screen: its
//                         cells end `bottom` px above the bottom of the window (the room the
//                         row's charts keep below their cells: a slider, a colour bar; in a grid
//                         of charts, also what the grid rows under it take beyond their cells),
//                         each of the `rows` rows between minRow and maxRow px high; `below`:
//                         the rows of cells of the grid rows under it, which the room is shared
//                         with (each as high as this chart's). Its row and column labels take
//                         the size its cells leave room for, none below ROW_LABEL_MIN_PX.
// The page adds what it knows of where the chart is shown (the component's `view`, merged into
// the figure's intent on arrival: plotly_present.js withView): presenter (drawn for a projector: bigger type,
// presented), grow (presenter mode may make it taller), fit (as above), lazy (plotly_lazy.js).
// The fonts are decided before Plotly draws (from the previous drawing's cells, or estimated
// from the column's width and the margins) and checked after it, so a redraw is rare.
// Plotly's own "auto" size assumes 0.65 em per character and shrinks numbers to 6 px where a
// measured 0.000 needs 2.5 em: the widths here are measured with a canvas in the chart's font.

const CELL_PAD_EM = 0.3;  // room left around a number in its cell (both sides together)
const LINE_EM = 1.3;  // a line of cell text, as Plotly places them
const DEFAULT_FAMILY = '"Open Sans", verdana, arial, sans-serif';
// Plotly's own margins where a layout sets none
const PLOTLY_MARGIN = { l: 80, r: 80, t: 100, b: 80 };
const PLOTLY_HEIGHT = 450;
// the numbers in a heatmap's cells: at the largest size (px) that fits the drawn cells up to
// the second number; none below the first (the hover gives them)
const CELL_TEXT = [10, 13];
const PRESENTER_CELL_TEXT = [14, 32];  // on a projector: 14 px is read from the back
let measureCtx = null;

// the widest of `strings` in em of this font (measured once at 100 px)
function widestEm(strings, family, weight) {
  if (!measureCtx) measureCtx = document.createElement("canvas").getContext("2d");
  measureCtx.font = `${weight || "normal"} 100px ${family || DEFAULT_FAMILY}`;
  let widest = 0;
  for (const s of strings) widest = Math.max(widest, measureCtx.measureText(s).width);
  return widest / 100;
}

function attnvizMeta(layout) {
  return (layout && layout.meta && layout.meta.attnviz) || {};
}

function axisKey(id, letter) {  // "x2" -> "xaxis2"
  return letter + "axis" + String(id || letter).slice(1);
}

// a layout's margins, Plotly's defaults where it sets none
function margins(layout) {
  return Object.assign({}, PLOTLY_MARGIN, (layout && layout.margin) || {});
}

// the subplot a trace is drawn in: "xy", "x2y2"
function subplotOf(trace) {
  return (trace.xaxis || "x") + (trace.yaxis || "y");
}

// the orientation of every trace's colour bar, to compare two figures
function barSides(data) {
  return (data || []).map((t) => (t.colorbar && t.colorbar.orientation) || "v").join();
}

// The rows and columns of a trace's cell text, and its strings, or null (no written text)
function cellStrings(trace, template) {
  if (trace.type !== "heatmap" || template !== "%{text}" || !Array.isArray(trace.text)) {
    return null;
  }
  const rows = trace.text.length;
  const strings = new Set();
  let cols = 0, lines = 1;
  for (const row of trace.text) {
    const cells = Array.isArray(row) ? row : [row];
    cols = Math.max(cols, cells.length);
    for (const s of cells) {
      if (s === null || s === undefined || s === "") continue;
      const parts = String(s).split("<br>");
      lines = Math.max(lines, parts.length);
      parts.forEach((p) => strings.add(p));
    }
  }
  return rows && cols ? { rows, cols, lines, strings: [...strings] } : null;
}

// The font (px) of numbers `em` wide on `lines` lines in a cell of {w, h} (less the gaps
// between cells), at most `hi`; 0 below `lo` (none written).
function cellFont(size, em, lines, gaps, lo, hi) {
  const byWidth = (size.w - (gaps.x || 0)) / (em + CELL_PAD_EM);
  const byHeight = (size.h - (gaps.y || 0)) / (lines * LINE_EM);
  const px = Math.floor(Math.min(byWidth, byHeight, hi));
  return px >= lo ? px : 0;
}

// The font (px) of the numbers of every subplot with cell text, 0 where none is to be written:
// {subplot: px}. `cellSize(trace, cells)` gives a trace's drawn (or expected) cell {w, h}.
function cellFonts(data, templates, layout, cellSize) {
  const meta = attnvizMeta(layout);
  const [lo, hi] = meta.cellText || (meta.presenter ? PRESENTER_CELL_TEXT : CELL_TEXT);
  const family = (layout && layout.font && layout.font.family) || DEFAULT_FAMILY;
  const fonts = {};
  data.forEach((trace, i) => {
    const cells = cellStrings(trace, templates[i]);
    if (!cells) return;
    const size = cellSize(trace, cells);
    if (!size) return;
    const tf = trace.textfont || {};
    const em = widestEm(cells.strings, tf.family || family, tf.weight);
    const px = cellFont(size, em, cells.lines, { x: trace.xgap, y: trace.ygap }, lo, hi);
    const subplot = subplotOf(trace);
    fonts[subplot] = subplot in fonts ? Math.min(fonts[subplot], px) : px;
  });
  return fonts;
}

// Write `fonts` into the traces: textfont.size, or texttemplate "" where none is written
// (the hover keeps the exact value). Returns the restyle a drawn chart needs, or null.
function applyFonts(data, templates, fonts) {
  const sizes = [], shown = [], indices = [];
  data.forEach((trace, i) => {
    if (!cellStrings(trace, templates[i])) return;
    const px = fonts[subplotOf(trace)];
    if (px === undefined) return;
    const template = px ? templates[i] : "";
    const size = px || ((trace.textfont && trace.textfont.size) || undefined);
    const now = trace.textfont && trace.textfont.size;
    if (template === trace.texttemplate && (!px || now === px)) return;
    trace.textfont = Object.assign({}, trace.textfont, { size: size });
    trace.texttemplate = template;
    sizes.push(size); shown.push(template); indices.push(i);
  });
  return indices.length ? [{ "textfont.size": sizes, texttemplate: shown }, indices] : null;
}

// The cells a trace of this figure gets, estimated before drawing: the plot area is the
// chart's `width` (the figure's own, if it has one) less the margins, split by the axis's
// domain. A function (trace, cells) -> {w, h} or null.
function expectedCells(layout, width) {
  const wide = layout.width || Math.round(width) || 0;
  const height = layout.height || PLOTLY_HEIGHT;
  const m = margins(layout);
  return (trace, cells) => {
    const xd = (layout[axisKey(trace.xaxis, "x")] || {}).domain || [0, 1];
    const yd = (layout[axisKey(trace.yaxis, "y")] || {}).domain || [0, 1];
    const w = (wide - m.l - m.r) * (xd[1] - xd[0]) / cells.cols;
    const h = (height - m.t - m.b) * (yd[1] - yd[0]) / cells.rows;
    return wide > 0 && w > 0 && h > 0 ? { w, h } : null;
  };
}

// The cells as drawn: each axis's length in px in Plotly's computed layout (`full`, the
// chart's _fullLayout: the one thing read of Plotly's drawing) over the trace's rows and
// columns. A function (trace, cells) -> {w, h} or null.
function drawnCells(full) {
  return (trace, cells) => {
    const xa = full && full[axisKey(trace.xaxis, "x")];
    const ya = full && full[axisKey(trace.yaxis, "y")];
    if (!xa || !ya || !xa._length || !ya._length) return null;
    return { w: xa._length / cells.cols, h: ya._length / cells.rows };
  };
}

// The height of a `fit` figure whose cells end `fit.bottom` px above the window's bottom,
// given `room`: the window's height less where the chart starts. null without `fit`.
function fitHeight(layout, room) {
  const fit = attnvizMeta(layout).fit;
  if (!fit || !fit.rows) return null;
  const m = margins(layout);
  const row = Math.max(fit.minRow || 0, Math.min(fit.maxRow || Infinity,
                       (room - m.t - fit.bottom) / (fit.rows + (fit.below || 0))));
  return Math.round(m.t + row * fit.rows + m.b);
}

// A fitted figure's row labels: their size, the figure's own (`own`, px) or what its rows
// leave room for (a thumbnail of GQA's heads fitted to the screen has 12-px rows: 16-px
// labels there run into each other), as Plotly.relayout's changes; none written below
// ROW_LABEL_MIN_PX (the hover gives them); null for a figure without fitted rows or without
// row labels.
const ROW_LABEL_ROOM = 1.15;  // a row label's line, in its font's size
const ROW_LABEL_MIN_PX = 9;
function rowLabels(layout, height, own) {
  const fit = attnvizMeta(layout).fit;
  if (!fit || !fit.rows || !height || !own) return null;
  const m = margins(layout);
  return labelsAt("yaxis", Math.min(own, Math.floor((height - m.t - m.b) / fit.rows
                                                     / ROW_LABEL_ROOM)));
}

// Plotly.relayout's changes writing an axis's labels at `size` px, or none below
// ROW_LABEL_MIN_PX
function labelsAt(name, size) {
  return size < ROW_LABEL_MIN_PX ? { [`${name}.showticklabels`]: false }
    : { [`${name}.showticklabels`]: true, [`${name}.tickfont.size`]: size };
}

// A fitted figure's column labels, likewise: the size the columns leave room for (at their own
// size, ten turned labels over a 90-px chart, or "o0 o1 o2 o3" over 60 px, run into each other
// in presenter mode at 1024 px), none below ROW_LABEL_MIN_PX. `plotWidth`: the width of the
// cells; `own`: the figure's own size of them.
const CHAR_EM = 0.62;  // a label's character, in its font's size (digits, lower-case letters)
function columnLabels(layout, data, plotWidth, own) {
  const fit = attnvizMeta(layout).fit;
  const trace = data && data[0];
  const cols = trace && trace.x ? trace.x.length : 0;
  if (!fit || !cols || !plotWidth || !own) return null;
  const axis = layout.xaxis || {};
  const col = plotWidth / cols;
  const chars = Math.max(1, ...(axis.ticktext || trace.x).map((t) => String(t).length));
  const room = axis.tickangle === -45 ? col * Math.SQRT1_2 / ROW_LABEL_ROOM
    : (col - 2) / (chars * CHAR_EM);
  return labelsAt("xaxis", Math.min(own, Math.floor(room)));
}

// a figure's own label size on an axis ("xaxis", "yaxis"), or false: it writes none
function ownLabels(layout, name) {
  const axis = layout[name] || {};
  return axis.showticklabels !== false && ((axis.tickfont && axis.tickfont.size)
    || (layout.font && layout.font.size) || 12);
}

// a layout with Plotly.relayout-style changes of its axes' labels applied (a copy)
function withLabels(layout, changes) {
  const out = { ...layout };
  for (const [path, value] of Object.entries(changes || {})) {
    const [name, key, sub] = path.split(".");
    out[name] = { ...(out[name] || {}) };
    if (sub) out[name][key] = { ...(out[name][key] || {}), [sub]: value };
    else out[name][key] = value;
  }
  return out;
}

// true when `changes` (Plotly.relayout's) would change `layout`
function changesLayout(layout, changes) {
  return Object.entries(changes || {}).some(([path, value]) => {
    const [name, key, sub] = path.split(".");
    const axis = layout[name] || {};
    return (sub ? (axis[key] || {})[sub] : axis[key]) !== value;
  });
}
