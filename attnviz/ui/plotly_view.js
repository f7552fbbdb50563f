// attnviz's Plotly chart: drawn once, then updated in place with Plotly.react.
//
// st.plotly_chart remounts a chart whenever its figure changes (Streamlit's element id hashes
// the figure), so every edit draws every changed chart from scratch, twice. This component is
// identified by its key alone: Streamlit calls the function below again with the new figure,
// and Plotly.react updates the same <div>. plotly.min.js is the installed plotly package's own
// file, served read-only by this server at the address each figure names (spec.plotlyUrl, see
// attnviz/ui/plotly_view.py): offline.
//
// One drawing at a time per chart. Plotly.react, Plotly.purge and Plotly.relayout must not
// overlap on the same <div>: a second call while the first one's drawing is still under way
// leaves the chart without its calculated data, and plotly.js throws "Cannot read properties
// of undefined (reading 'length')" in drawFramework. That is what happened when figures
// arrived while plotly.min.js was still loading (a preset loaded just after the page opened,
// on a slow connection or a busy server): every figure waiting for the script was drawn at
// once when it came. Now every Plotly call on a chart goes through its queue (enqueue), and a
// chart given several figures while busy draws only the newest.

function loadPlotly(url) {
  if (window.Plotly) return Promise.resolve(window.Plotly);
  if (!window.__attnvizPlotly) {
    window.__attnvizPlotly = new Promise((resolve, reject) => {
      const script = document.createElement("script");
      script.src = url;
      script.onload = () => resolve(window.Plotly);
      script.onerror = () => {
        window.__attnvizPlotly = null; // let the next draw try again
        script.remove();
        reject(new Error("plotly.min.js did not load"));
      };
      document.head.appendChild(script);
    });
  }
  return window.__attnvizPlotly;
}

// Run task() after every task queued on this chart before it has finished (failed or not).
function enqueue(div, task) {
  const previous = div.__attnvizQueue || Promise.resolve();
  const next = previous.catch(() => {}).then(task);
  div.__attnvizQueue = next;
  const draws = drawsOnPage();
  draws.busy += 1;
  draws.last = performance.now();
  next.finally(() => {
    draws.busy -= 1;
    draws.last = performance.now();
  }).catch(() => {});
  return next;
}

// Every chart's queued and running tasks on the page, and when one last started or ended:
// fill_tabs.js waits for the page's charts to be still before it asks for the run that fills
// the Playground's hidden tabs.
function drawsOnPage() {
  if (!window.__attnvizDraws) window.__attnvizDraws = { busy: 0, last: performance.now() };
  return window.__attnvizDraws;
}

// A click on a point sends {points: [{curve_number, point_index}]} as the trigger value
// "selection" (the shape of st.plotly_chart's selection events), when the chart asks for it.
function sendClicks(div) {
  if (div.__attnvizClicks) return;
  div.__attnvizClicks = true;
  div.on("plotly_click", (event) => {
    const send = div.__attnvizSend;
    if (!send) return;
    send("selection", {
      points: event.points.map((p) => ({
        curve_number: p.curveNumber,
        point_index: p.pointIndex ?? p.pointNumber,
      })),
    });
  });
}

// the orientation of every trace's colour bar, to compare two figures
function barSides(data) {
  return (data || []).map((t) => (t.colorbar && t.colorbar.orientation) || "v").join();
}

// The slider of a figure with frames steps through them in the browser; its release sends the
// name of the step's frame (its label unless the figure has several sliders) as the trigger
// value "slider", when the chart asks for it.
function sendSliderEnds(div) {
  if (div.__attnvizSlider) return;
  div.__attnvizSlider = true;
  div.on("plotly_sliderend", (event) => {
    const send = div.__attnvizSendSlider;
    if (!send || !event.step) return;
    const args = event.step.args;
    const frame = Array.isArray(args) && Array.isArray(args[0]) ? args[0][0] : undefined;
    send("slider", String(frame === undefined ? event.step.label : frame));
  });
}

// ---- A slider is the control of its value: stepped in the browser (issues 27 and 28) --------
//
// A chart's slider steps through the figure's frames in the browser, dragged or with the keys
// (it takes the keyboard focus: ← → one step, Home End the ends), and the charts whose frames
// share its Plotly group (frame.group) follow it. The value is sent when the drag or the key
// is released; the figures of the rerun that records it start at the frame already drawn, and
// a chart whose figure differs only in what its frames change (spec.still and spec.shown, see
// attnviz/ui/plotly_view.py) is left as it is: no redraw after that rerun.

const STEP_NOW = { mode: "immediate", frame: { duration: 0, redraw: true },
  transition: { duration: 0 } };
const SEND_AFTER_MS = 150;  // st.data_editor's own debounce
const STEP_KEYS = { ArrowLeft: -1, ArrowDown: -1, ArrowRight: 1, ArrowUp: 1, Home: -Infinity,
  End: Infinity };

// the frame a slider step shows
function stepFrame(step) {
  const args = step && step.args;
  return Array.isArray(args) && Array.isArray(args[0]) ? String(args[0][0]) : undefined;
}

// show frame `name` on the other charts of div's group that have it
function follow(div, name) {
  if (!div.__attnvizGroup || !window.Plotly) return;
  for (const other of document.querySelectorAll("div.attnviz-chart")) {
    if (other === div || other.__attnvizGroup !== div.__attnvizGroup ||
        !(other.__attnvizNames && other.__attnvizNames.has(name)) ||
        other.__attnvizShown === name) continue;
    other.__attnvizShown = name;
    enqueue(other, () => window.Plotly.animate(other, [name], STEP_NOW));
  }
}

// each slider's <g> takes the focus and says where it is (again after every drawing); the
// chart's slider groups are drawn in the order of its layout's sliders
function sliderGroups(div) {
  return Array.from(div.querySelectorAll("g.slider-group"));
}

function sliderAria(div) {
  const all = (div._fullLayout && div._fullLayout.sliders) || [];
  sliderGroups(div).forEach((group, i) => {
    const opts = all[i];
    if (!opts || !opts.steps) return;
    const step = opts.steps[opts.active] || {};
    const prefix = (opts.currentvalue && opts.currentvalue.prefix) || "";
    group.setAttribute("tabindex", "0");
    group.setAttribute("role", "slider");
    group.setAttribute("aria-label", prefix.replace(/[:\s]+$/, ""));
    group.setAttribute("aria-valuemin", "0");
    group.setAttribute("aria-valuemax", String(opts.steps.length - 1));
    group.setAttribute("aria-valuenow", String(opts.active));
    group.setAttribute("aria-valuetext", String(step.label ?? ""));
  });
}

// one slider's steps by key, its drag followed by the group; once per chart (purge resets)
function stepFrames(div) {
  if (div.__attnvizStepping) return;
  div.__attnvizStepping = true;
  div.on("plotly_sliderchange", (event) => {
    const name = stepFrame(event.step);
    if (name === undefined) return;
    div.__attnvizShown = name;
    follow(div, name);
    sliderAria(div);
  });
  // plotly.js marks a slider dragged on the mouse press and unmarks, on the release, the
  // slider object drawn at that moment; a quick click whose step is still being drawn (the
  // new object copied the mark) left the slider marked for good, and a marked slider ignores
  // Play's frames: Learn's Play ran to the end under a slider stuck on the clicked step
  div.on("plotly_sliderend", () => {
    for (const opts of (div._fullLayout && div._fullLayout.sliders) || []) opts._dragging = false;
  });
  div.addEventListener("keydown", (event) => {
    const move = STEP_KEYS[event.key];
    if (move !== undefined) clearTimeout(div.__attnvizSendTimer);
    const group = move !== undefined && event.target.closest &&
      event.target.closest("g.slider-group");
    const which = group ? sliderGroups(div).indexOf(group) : -1;  // which of the sliders
    const opts = which >= 0 && div._fullLayout && div._fullLayout.sliders &&
      div._fullLayout.sliders[which];
    if (!opts || !opts.steps) return;
    event.preventDefault();
    const last = opts.steps.length - 1;
    const start = div.__attnvizKeySlider === which ? div.__attnvizKeyIndex : undefined;
    const index = Math.max(0, Math.min(last, (start ?? opts.active) + move));
    div.__attnvizKeyIndex = index;
    div.__attnvizKeySlider = which;
    const name = stepFrame(opts.steps[index]);
    if (name === undefined || name === div.__attnvizShown) return;
    div.__attnvizShown = name;
    // one drawing: the step's frame with the slider moved to it (a frame's layout is merged
    // into the figure's, its sliders element by element)
    const frame = div.__attnvizFrames.get(name);
    if (!frame) return;
    const moved = Array.from({ length: which + 1 }, (_, k) => (k === which ? { active: index } : {}));
    const step = Object.assign({}, frame, { layout: Object.assign({}, frame.layout,
      { sliders: moved }) });
    enqueue(div, () => window.Plotly.animate(div, [step], STEP_NOW)
      .then(() => {
        sliderAria(div);
        const again = sliderGroups(div)[which];
        if (again) again.focus();
      }));
    follow(div, name);
  });
  // the value is sent a moment after the last key is let go (SEND_AFTER_MS): a few quick
  // presses make one rerun, and the rerun's page update does not hold up the repaint
  div.addEventListener("keyup", (event) => {
    if (STEP_KEYS[event.key] === undefined || div.__attnvizKeyIndex === undefined) return;
    div.__attnvizKeyIndex = undefined;
    clearTimeout(div.__attnvizSendTimer);
    div.__attnvizSendTimer = setTimeout(() => {
      const send = div.__attnvizSendSlider;
      if (send && div.__attnvizShown !== undefined) send("slider", String(div.__attnvizShown));
    }, SEND_AFTER_MS);
  });
}

// the figure is the one drawn but for the frame it starts at: step to it (if another is
// shown) instead of drawing it again; false when it must be drawn
async function sameFigure(div, spec, Plotly) {
  if (!spec.still || div.__attnvizFailed || !div._fullLayout ||
      div.__attnvizStill !== spec.still) return false;
  if (spec.shown != null && div.__attnvizShown !== spec.shown) {
    div.__attnvizShown = spec.shown;
    await Plotly.animate(div, [spec.shown], STEP_NOW);
    const opts = div._fullLayout.sliders && div._fullLayout.sliders[0];
    const index = opts ? opts.steps.findIndex((s) => stepFrame(s) === spec.shown) : -1;
    if (index >= 0 && index !== opts.active) {
      await Plotly.relayout(div, { "sliders[0].active": index });
    }
    sliderAria(div);
  }
  return true;
}

// after a drawing: what the chart shows, its group and frames, its slider's keys
function framesDrawn(div, spec) {
  const frames = spec.frames || [];
  div.__attnvizStill = spec.still || null;
  div.__attnvizShown = spec.shown ?? undefined;
  div.__attnvizGroup = frames.length ? frames[0].group || null : null;
  div.__attnvizFrames = new Map(frames.map((f) => [String(f.name), f]));
  div.__attnvizNames = new Set(div.__attnvizFrames.keys());
  if (frames.length && spec.layout && spec.layout.sliders && spec.layout.sliders.length) {
    stepFrames(div);
    sliderAria(div);
  }
}

// The message shown in place of a chart that could not be drawn (beside the chart's <div>, so
// that the next figure draws on a clean one); null hides it.
function showError(div, message) {
  let box = div.parentElement && div.parentElement.querySelector(":scope > .attnviz-chart-error");
  if (message === null) {
    if (box) box.remove();
    return;
  }
  if (!box) {
    box = document.createElement("p");
    box.className = "attnviz-chart-error";
    div.parentElement.insertBefore(box, div);
  }
  box.textContent = "This chart could not be drawn: " + message +
    ". Reload the page; if it persists, start attnviz with the README's command.";
}

// ---- Cell numbers and heights sized in the browser, from what is drawn (issue 28) ----------
//
// Only the browser knows how large a heatmap's cells are drawn (the column's width, the
// screen's height). A figure's layout.meta.attnviz may carry (attnviz/ui/panels.py and
// attnviz/ui/lecture.py put them there):
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
// The fonts are decided before Plotly draws (from the previous drawing's cells, or estimated
// from the column's width and the margins) and checked after it, so a redraw is rare.
// Plotly's own "auto" size assumes 0.65 em per character and shrinks numbers to 6 px where a
// measured 0.000 needs 2.5 em: the widths here are measured with a canvas in the chart's font.

const CELL_PAD_EM = 0.3;  // room left around a number in its cell (both sides together)
const LINE_EM = 1.3;  // a line of cell text, as Plotly places them
const DEFAULT_FAMILY = '"Open Sans", verdana, arial, sans-serif';
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

// The font (px) of the numbers of every subplot with cell text, 0 where none is to be written:
// {subplot: px}. `cellSize(trace)` gives a trace's drawn (or expected) cell {w, h}.
function cellFonts(data, templates, layout, cellSize) {
  const [lo, hi] = attnvizMeta(layout).cellText ||
    [10, (layout && layout.font && layout.font.size) || 13];
  const family = (layout && layout.font && layout.font.family) || DEFAULT_FAMILY;
  const fonts = {};
  data.forEach((trace, i) => {
    const cells = cellStrings(trace, templates[i]);
    if (!cells) return;
    const size = cellSize(trace, cells);
    if (!size) return;
    const tf = trace.textfont || {};
    const em = widestEm(cells.strings, tf.family || family, tf.weight);
    const byWidth = (size.w - (trace.xgap || 0)) / (em + CELL_PAD_EM);
    const byHeight = (size.h - (trace.ygap || 0)) / (cells.lines * LINE_EM);
    let px = Math.floor(Math.min(byWidth, byHeight, hi));
    if (!(px >= lo)) px = 0;
    const subplot = (trace.xaxis || "x") + (trace.yaxis || "y");
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
    const px = fonts[(trace.xaxis || "x") + (trace.yaxis || "y")];
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

// The cells a trace of this figure gets, estimated before drawing: the plot area is the width
// of the chart (or its own) less the margins, split by the axis's domain.
function expectedCells(div, layout) {
  const width = layout.width || Math.round(div.getBoundingClientRect().width) || 0;
  const height = layout.height || 450;
  const m = Object.assign({ l: 80, r: 80, t: 100, b: 80 }, layout.margin || {});
  return (trace, cells) => {
    const xd = (layout[axisKey(trace.xaxis, "x")] || {}).domain || [0, 1];
    const yd = (layout[axisKey(trace.yaxis, "y")] || {}).domain || [0, 1];
    const w = (width - m.l - m.r) * (xd[1] - xd[0]) / cells.cols;
    const h = (height - m.t - m.b) * (yd[1] - yd[0]) / cells.rows;
    return width > 0 && w > 0 && h > 0 ? { w, h } : null;
  };
}

// The cells as drawn: each axis's length in px (Plotly's computed layout: the one place this
// file reads it) over the trace's rows and columns.
function drawnCells(div) {
  const full = div._fullLayout;
  return (trace, cells) => {
    const xa = full && full[axisKey(trace.xaxis, "x")];
    const ya = full && full[axisKey(trace.yaxis, "y")];
    if (!xa || !ya || !xa._length || !ya._length) return null;
    return { w: xa._length / cells.cols, h: ya._length / cells.rows };
  };
}

// How far from the top of the page the chart starts (its scrolled ancestors' offsets added)
function pageTop(div) {
  let y = div.getBoundingClientRect().top;
  for (let el = div.parentElement; el; el = el.parentElement) y += el.scrollTop || 0;
  return y;
}

// The height that makes a `fit` figure's cells end `fit.bottom` px above the window's bottom
function fittedHeight(div, layout) {
  const fit = attnvizMeta(layout).fit;
  if (!fit || !fit.rows) {
    div.__attnvizFitTop = undefined;
    return null;
  }
  const m = Object.assign({ t: 100, b: 80 }, layout.margin || {});
  div.__attnvizFitTop = pageTop(div);
  div.__attnvizFitVh = window.innerHeight;
  const room = window.innerHeight - div.__attnvizFitTop - m.t - fit.bottom;
  const row = Math.max(fit.minRow || 0,
                       Math.min(fit.maxRow || Infinity, room / (fit.rows + (fit.below || 0))));
  return Math.round(m.t + row * fit.rows + m.b);
}

// A chart whose height follows the screen is fitted again when what is above it grows or
// shrinks (a message shown or gone, a title wrapping: it moved without changing size) and
// when the window's height changes.
function watchTop(div) {
  const id = setInterval(() => {
    if (!div.isConnected) {
      clearInterval(id);
    } else if (div.__attnvizFitTop !== undefined &&
               (Math.abs(pageTop(div) - div.__attnvizFitTop) > 2 ||
                window.innerHeight !== div.__attnvizFitVh)) {
      div.__attnvizFitTop = undefined;  // once per move
      div.__attnvizSettle();
    }
  }, 400);
}

// A fitted figure's row labels: their size, the figure's own or what its rows leave room for
// (a thumbnail of GQA's heads fitted to the screen had 12-px rows under 16-px labels, which ran
// into each other), as Plotly.relayout's changes; none written below ROW_LABEL_MIN_PX (the
// hover gives them); null for a figure without fitted rows or without row labels.
const ROW_LABEL_ROOM = 1.15;  // a row label's line, in its font's size
const ROW_LABEL_MIN_PX = 9;
function rowLabels(div, layout, height) {
  const fit = attnvizMeta(layout).fit;
  if (!fit || !fit.rows || !height || !div.__attnvizRowLabels) return null;
  const m = Object.assign({ t: 100, b: 80 }, layout.margin || {});
  const size = Math.min(div.__attnvizRowLabels,
                        Math.floor((height - m.t - m.b) / fit.rows / ROW_LABEL_ROOM));
  return labelsAt("yaxis", size);
}

// Plotly.relayout's changes writing an axis's labels at `size` px, or none below
// ROW_LABEL_MIN_PX
function labelsAt(name, size) {
  return size < ROW_LABEL_MIN_PX ? { [`${name}.showticklabels`]: false }
    : { [`${name}.showticklabels`]: true, [`${name}.tickfont.size`]: size };
}

// A fitted figure's column labels, likewise: the size the columns leave room for (ten turned
// labels over a 90-px chart, or "o0 o1 o2 o3" over 60 px, had been written into each other in
// presenter mode at 1024 px), none below ROW_LABEL_MIN_PX. `plotWidth`: the width of the cells.
const CHAR_EM = 0.62;  // a label's character, in its font's size (digits, lower-case letters)
function columnLabels(div, layout, data, plotWidth) {
  const fit = attnvizMeta(layout).fit;
  const trace = data && data[0];
  const cols = trace && trace.x ? trace.x.length : 0;
  if (!fit || !cols || !plotWidth || !div.__attnvizColLabels) return null;
  const axis = layout.xaxis || {};
  const col = plotWidth / cols;
  const chars = Math.max(1, ...(axis.ticktext || trace.x).map((t) => String(t).length));
  const room = axis.tickangle === -45 ? col * Math.SQRT1_2 / ROW_LABEL_ROOM
    : (col - 2) / (chars * CHAR_EM);
  const size = Math.min(div.__attnvizColLabels, Math.floor(room));
  return labelsAt("xaxis", size);
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

// Before a drawing: the fitted height and the fonts the cells are expected to take
function sizeBeforeDrawing(div, spec) {
  const templates = spec.data.map((t) => t.texttemplate);
  div.__attnvizTemplates = templates;
  const height = fittedHeight(div, spec.layout);
  if (height) spec.layout.height = height;
  div.__attnvizRowLabels = ownLabels(spec.layout, "yaxis");
  div.__attnvizColLabels = ownLabels(spec.layout, "xaxis");
  const m = Object.assign({ l: 80, r: 80 }, spec.layout.margin || {});
  const width = (spec.layout.width || div.getBoundingClientRect().width) - m.l - m.r;
  // (in place: the figure handed to Plotly holds this very layout)
  Object.assign(spec.layout, withLabels(spec.layout, {
    ...rowLabels(div, spec.layout, height), ...columnLabels(div, spec.layout, spec.data, width) }));
  const previous = div.__attnvizCells;
  const sameCells = previous && spec.data.every((t, i) => {
    const cells = cellStrings(t, templates[i]);
    const key = (t.xaxis || "x") + (t.yaxis || "y");
    return !cells || (previous[key] && previous[key].rows === cells.rows &&
                      previous[key].cols === cells.cols && !height);
  });
  const size = sameCells
    ? (t, cells) => { const p = previous[(t.xaxis || "x") + (t.yaxis || "y")];
                      return { w: p.w, h: p.h }; }
    : expectedCells(div, spec.layout);
  applyFonts(spec.data, templates, cellFonts(spec.data, templates, spec.layout, size));
}

// After a drawing (or a change of width): the fonts from the drawn cells, and the fitted
// height again (what is above the chart may have moved); redrawn only when one differs.
function sizeAfterDrawing(div) {
  const Plotly = window.Plotly;
  if (!Plotly || !div._fullLayout || !div.data) return Promise.resolve();
  const templates = div.__attnvizTemplates || div.data.map((t) => t.texttemplate);
  const drawn = drawnCells(div);
  const cellsSeen = {};
  const size = (trace, cells) => {
    const s = drawn(trace, cells);
    if (s) cellsSeen[(trace.xaxis || "x") + (trace.yaxis || "y")] = { ...s, ...cells };
    return s;
  };
  const data = div.data.map((t) => Object.assign({}, t));
  const restyle = applyFonts(data, templates, cellFonts(data, templates, div.layout, size));
  div.__attnvizCells = cellsSeen;
  const height = fittedHeight(div, div.layout);
  const steps = [];
  if (restyle) steps.push(() => Plotly.restyle(div, restyle[0], restyle[1]));
  const plotWidth = div._fullLayout._size && div._fullLayout._size.w;
  const columns = columnLabels(div, div.layout, div.data, plotWidth) || {};
  const changed = Object.entries(columns).some(([path, value]) => {
    const [name, key, sub] = path.split(".");
    const axis = div.layout[name] || {};
    return (sub ? (axis[key] || {})[sub] : axis[key]) !== value;
  });
  if (height && Math.abs(height - (div.layout.height || 0)) > 3) {
    steps.push(() => Plotly.relayout(div, { height: height, ...columns,
                                            ...(rowLabels(div, div.layout, height) || {}) }));
  } else if (changed) {
    steps.push(() => Plotly.relayout(div, columns));
  }
  return steps.reduce((p, step) => p.then(step), Promise.resolve());
}

// Plotly.react, given a figure's frames, replaces the chart's frames with them when it updates
// the chart in place, but leaves it none when it draws the chart anew (after a purge: a colour
// bar changing side, a drawing that failed; its drag slider then stepped through no frames and
// the chart kept the matrix it had): then they are added
async function keepFrames(div, frames, Plotly) {
  const have = (div._transitionData && div._transitionData._frames) || [];
  if (frames.length && !have.length) await Plotly.addFrames(div, frames);
}

// Draw one figure (a queued task): afresh after a failure or when a colour bar changes side,
// else in place.
async function draw(div, spec) {
  try {
    const Plotly = await loadPlotly(spec.plotlyUrl);
    if (await sameFigure(div, spec, Plotly)) {  // stepped to in the browser already
      div.__attnvizSettle();  // (its pass marks the chart drawn again)
      return;
    }
    // Plotly.react leaves a vertical colour bar's tick labels behind when the bar turns
    // horizontal (a matrix shrinking to one or two rows): draw such a change afresh
    if (div.__attnvizFailed || (div.data && barSides(div.data) !== barSides(spec.data))) {
      Plotly.purge(div);
      // purge dropped their listeners
      div.__attnvizClicks = div.__attnvizSlider = div.__attnvizStepping = false;
    }
    // not Plotly's own "responsive" (its window-resize handler is Plots.resize, see settle):
    // a ResizeObserver follows the column's width
    const config = Object.assign({}, spec.config, { responsive: false });
    const figure = { data: spec.data, layout: spec.layout, config: config };
    if (spec.frames && spec.frames.length) figure.frames = spec.frames;
    div.__attnvizOwnWidth = Boolean(spec.layout && spec.layout.width);  // its own width
    delete div.dataset.sized;
    sizeBeforeDrawing(div, spec);
    await Plotly.react(div, figure);
    await keepFrames(div, spec.frames || [], Plotly);
    await sizeAfterDrawing(div);
    div.__attnvizFailed = false;
    showError(div, null);
    if (spec.clickable) sendClicks(div);
    if (spec.sliderEvents) sendSliderEnds(div);
    framesDrawn(div, spec);
    div.__attnvizSettle();  // the width may have moved while this drawing was under way
  } catch (err) {
    div.__attnvizFailed = true;
    console.error("attnviz: a chart could not be drawn", err);
    showError(div, err && err.message ? err.message : String(err));
  }
}

// The drawn flag: data-sized="1" on the chart's <div> says that the newest figure it was handed
// is drawn, its cell numbers and height final, and no pass over its size is waiting (tests wait
// for it instead of waiting a fixed time). It is cleared when a new figure arrives, while a
// drawing or a settle pass is under way or due, and while a figure waits to be seen (lazy or in
// a hidden tab); set only at the end of a settle pass, which every drawing ends with. A chart
// that could not be drawn never gets it (its message says why).
//
// Follow the column's width (sidebar opened or closed, window resized, a tab shown): once the
// width has been still for a moment, redraw at the new width if the chart was drawn at another
// one (also when the change came while plotly.js was loading or drawing: presenter mode
// closing the sidebar during the rerun that redraws every chart).
function followWidth(div) {
  let timer = null;
  div.__attnvizSettle = (tries = 3) => {
    clearTimeout(timer);
    delete div.dataset.sized;  // until this pass has measured the chart again
    const pass = timer = setTimeout(() => enqueue(div, () => {
      const now = Math.round(div.getBoundingClientRect().width);
      if (tries > 0 && now && !div.__attnvizOwnWidth && !div.__attnvizFailed &&
          window.Plotly && div._fullLayout &&
          Math.abs(now - Math.round(div._fullLayout.width)) > 1) {
        // the new width only: Plotly.Plots.resize would also drop the figure's own height,
        // and a chart redrawn while its tab or column was collapsed then stayed 0 px tall
        return window.Plotly.relayout(div, { width: now })
          .then(() => sizeAfterDrawing(div))
          .then(() => div.__attnvizSettle(tries - 1));
      }
      if (tries > 0 && !div.__attnvizFailed && window.Plotly && div._fullLayout) {
        return sizeAfterDrawing(div);  // what is above the chart may have moved
      }
      return undefined;
    }).finally(() => {
      if (timer === pass && !div.__attnvizFailed && !div.__attnvizPending) {
        div.dataset.sized = "1";
      }
    }), 150);
  };
  new ResizeObserver(() => div.__attnvizSettle()).observe(div);
  watchTop(div);
}

// ---- Only what changed, only what is seen (issue 28 item 7) ---------------------------------
//
// Streamlit hands every chart of the page its figure again on every rerun. A figure identical
// to the one the chart has (drawn, being drawn or waiting) is not drawn again: a Gradients loss
// select redrew the ten forward matrices it does not change. A figure whose layout.meta.attnviz
// says `lazy` (Gradients, a long page) is redrawn at once only where the chart is on screen or
// near it (LAZY_MARGIN_PX); further down, the chart keeps its last drawing, marked
// data-stale="1", and is redrawn when it is scrolled into view (an IntersectionObserver on the
// scrolling column). Its first drawing is never put off (a page opens complete), but for a
// chart in a hidden tab (the Playground's focus tabs: every focus's charts come with every run):
// any figure it is handed is drawn when its tab is shown, so a tab switch draws only that tab's
// charts, and an edit draws only the open tab's.

const LAZY_MARGIN_PX = 300;

// the element that scrolls the chart (Streamlit's main column), or null for the window;
// looked up once per chart
function scroller(div) {
  if (div.__attnvizScroller !== undefined) return div.__attnvizScroller;
  div.__attnvizScroller = null;
  for (let el = div.parentElement; el; el = el.parentElement) {
    const overflow = getComputedStyle(el).overflowY;
    if (overflow === "auto" || overflow === "scroll") {
      div.__attnvizScroller = el;
      break;
    }
  }
  return div.__attnvizScroller;
}

// true when the chart is in a hidden tab (or any element not displayed): it has no box at all
function hidden(div) {
  return div.getClientRects().length === 0;
}

// true when the chart is within LAZY_MARGIN_PX of what is on screen (or not laid out at all)
function nearView(div) {
  const r = div.getBoundingClientRect();
  if (!r.width && !r.height) return true;
  const box = scroller(div);
  const top = box ? Math.max(0, box.getBoundingClientRect().top) : 0;
  const bottom = box ? Math.min(window.innerHeight, box.getBoundingClientRect().bottom)
    : window.innerHeight;
  return r.bottom > top - LAZY_MARGIN_PX && r.top < bottom + LAZY_MARGIN_PX;
}

// draw the newest figure handed to the chart (a queued task)
function drawPending(div) {
  delete div.dataset.stale;
  enqueue(div, () => {
    const next = div.__attnvizPending;
    div.__attnvizPending = null;
    return next ? draw(div, next) : undefined;
  });
}

// the chart's newest figure is drawn when the chart comes near the screen
function drawWhenSeen(div) {
  div.dataset.stale = "1";
  delete div.dataset.sized;  // not final until drawn
  if (!div.__attnvizSeen) {
    div.__attnvizSeen = new IntersectionObserver((entries) => {
      if (div.__attnvizPending && div.dataset.stale && entries.some((e) => e.isIntersecting)) {
        drawPending(div);
      }
    }, { root: scroller(div), rootMargin: `${LAZY_MARGIN_PX}px 0px` });
  }
  // observed afresh: the observer's first report says where the chart is now (drawn at once
  // should it be in view after all)
  div.__attnvizSeen.unobserve(div);
  div.__attnvizSeen.observe(div);
}

// true when `text` is the figure the chart already has (drawn, being drawn or waiting) and,
// for a figure with frames, the chart still shows the frame that figure starts at
function alreadyHas(div, text) {
  if (div.__attnvizFailed || div.__attnvizWanted !== text) return false;
  return Boolean(div.__attnvizPending) || div.__attnvizShown === div.__attnvizWantedShown;
}

export default function (component) {
  const { data, parentElement, setTriggerValue } = component;
  let div = parentElement.querySelector(":scope > div.attnviz-chart");
  if (!div) {
    div = document.createElement("div");
    div.className = "attnviz-chart";
    parentElement.appendChild(div);
    followWidth(div);
  }
  // the figure's JSON arrives as UTF-8 bytes (a string, should Streamlit ever decode it)
  const text = typeof data === "string" ? data : new TextDecoder().decode(data);
  if (alreadyHas(div, text)) {
    div.__attnvizSend = div.__attnvizSend && setTriggerValue;
    div.__attnvizSendSlider = div.__attnvizSendSlider && setTriggerValue;
    return;
  }
  const spec = JSON.parse(text);
  div.__attnvizSend = spec.clickable ? setTriggerValue : null;
  div.__attnvizSendSlider = spec.sliderEvents ? setTriggerValue : null;
  div.__attnvizWanted = text;
  div.__attnvizWantedShown = spec.shown ?? undefined;
  // only the newest figure is drawn: one that arrives while the chart is busy replaces any
  // other still waiting
  div.__attnvizPending = spec;
  delete div.dataset.sized;  // (the drawn flag) not drawn yet
  if (hidden(div) || (attnvizMeta(spec.layout).lazy && div._fullLayout && !nearView(div))) {
    drawWhenSeen(div);
  } else {
    drawPending(div);
  }
}
