// attnviz's chart component, its sizing: what it measures of the page (the chart's width, where
// it starts, the window's height, Plotly's drawn axes) handed to the pure functions of
// plotly_fit.js, before and after Plotly draws.

// The page's width (px): presenter mode's tick labels grow with it (plotly_fit.js presented)
function pageWidth() {
  return document.documentElement.clientWidth || window.innerWidth;
}

// How far from the top of the page the chart starts (its scrolled ancestors' offsets added)
function pageTop(div) {
  let y = div.getBoundingClientRect().top;
  for (let el = div.parentElement; el; el = el.parentElement) y += el.scrollTop || 0;
  return y;
}

// The height that makes a `fit` figure's cells end `fit.bottom` px above the window's bottom
// (fitHeight), noting where the chart stood (watchTop fits it again when that moves)
function fittedHeight(div, layout) {
  const fit = attnvizMeta(layout).fit;
  if (!fit || !fit.rows) {
    div.__attnvizFitTop = undefined;
    return null;
  }
  div.__attnvizFitTop = pageTop(div);
  div.__attnvizFitVh = window.innerHeight;
  return fitHeight(layout, window.innerHeight - div.__attnvizFitTop);
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

// Before a drawing: the fitted height and the fonts the cells are expected to take
function sizeBeforeDrawing(div, spec) {
  const templates = spec.data.map((t) => t.texttemplate);
  div.__attnvizTemplates = templates;
  const height = fittedHeight(div, spec.layout);
  if (height) spec.layout.height = height;
  div.__attnvizRowLabels = ownLabels(spec.layout, "yaxis");
  div.__attnvizColLabels = ownLabels(spec.layout, "xaxis");
  const m = margins(spec.layout);
  const chartWidth = div.getBoundingClientRect().width;
  const width = (spec.layout.width || chartWidth) - m.l - m.r;
  // (in place: the figure handed to Plotly holds this very layout)
  Object.assign(spec.layout, withLabels(spec.layout, {
    ...rowLabels(spec.layout, height, div.__attnvizRowLabels),
    ...columnLabels(spec.layout, spec.data, width, div.__attnvizColLabels) }));
  const previous = div.__attnvizCells;
  const sameCells = previous && spec.data.every((t, i) => {
    const cells = cellStrings(t, templates[i]);
    const key = subplotOf(t);
    return !cells || (previous[key] && previous[key].rows === cells.rows &&
                      previous[key].cols === cells.cols && !height);
  });
  const size = sameCells
    ? (t) => { const p = previous[subplotOf(t)]; return { w: p.w, h: p.h }; }
    : expectedCells(spec.layout, chartWidth);
  applyFonts(spec.data, templates, cellFonts(spec.data, templates, spec.layout, size));
}

// After a drawing (or a change of width): the fonts from the drawn cells, and the fitted
// height again (what is above the chart may have moved); redrawn only when one differs.
function sizeAfterDrawing(div) {
  const Plotly = window.Plotly;
  if (!Plotly || !div._fullLayout || !div.data) return Promise.resolve();
  const templates = div.__attnvizTemplates || div.data.map((t) => t.texttemplate);
  const drawn = drawnCells(div._fullLayout);
  const cellsSeen = {};
  const size = (trace, cells) => {
    const s = drawn(trace, cells);
    if (s) cellsSeen[subplotOf(trace)] = { ...s, ...cells };
    return s;
  };
  const data = div.data.map((t) => Object.assign({}, t));
  const restyle = applyFonts(data, templates, cellFonts(data, templates, div.layout, size));
  div.__attnvizCells = cellsSeen;
  const height = fittedHeight(div, div.layout);
  const steps = [];
  if (restyle) steps.push(() => Plotly.restyle(div, restyle[0], restyle[1]));
  const plotWidth = div._fullLayout._size && div._fullLayout._size.w;
  const columns = columnLabels(div.layout, div.data, plotWidth, div.__attnvizColLabels) || {};
  if (height && Math.abs(height - (div.layout.height || 0)) > 3) {
    steps.push(() => Plotly.relayout(div, { height: height, ...columns,
      ...(rowLabels(div.layout, height, div.__attnvizRowLabels) || {}) }));
  } else if (changesLayout(div.layout, columns)) {
    steps.push(() => Plotly.relayout(div, columns));
  }
  return steps.reduce((p, step) => p.then(step), Promise.resolve());
}
