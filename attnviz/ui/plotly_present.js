// attnviz's chart component, the page's view of a figure: the view merged into the figure's
// intent and presenter mode's type for a projector. Pure functions of a figure and the page's
// width, like plotly_fit.js; tests/browser/test_fit_js.py loads both files into a blank page
// and checks each function.

const PRESENTER_FONT_PX = 22;  // the figure's own type (titles, legends)
// axis labels and colour-bar ticks: a step smaller, room for numbers; they grow with the page's
// width (the projected image is as large, its pixels smaller): 16 px up to 1280 px wide, 18 px
// at 1920 (read from the back of a hall at 1920x1080), at most 20 px
const PRESENTER_TICK_PX = 16;
const PRESENTER_TICK_MAX_PX = 20;
const PRESENTER_TICK_FROM_WIDTH = 1280;  // the page's width (px) where the labels start to grow
const PRESENTER_TICK_WIDTH_PER_PX = 320;  // the page's px per px of label beyond it
const PRESENTER_SLIDER_PX = 18;  // a drag slider's value line ("drag τ = 1")
const PRESENTER_GROW = 1.3;  // a figure's height, unless the page fits it itself (view.grow false)
const TICK_PX = 13;  // the type the figures' side margins are estimated for (heatmap.py's FONT_PX)

// Presenter mode's tick labels (px) on a page `pageWidth` px wide (unknown: the smallest)
function presenterTickPx(pageWidth) {
  const beyond = Math.max(0, (pageWidth || 0) - PRESENTER_TICK_FROM_WIDTH);
  return Math.min(PRESENTER_TICK_MAX_PX,
                  PRESENTER_TICK_PX + Math.round(beyond / PRESENTER_TICK_WIDTH_PER_PX));
}

// A presented figure's top margin (px) for column labels of `tickPx`, given its own `top`:
// the figures give theirs for presenter mode's smallest labels (heatmap.py's PRESENTER_TICK_PX;
// charts side by side share one), and it grows in proportion with bigger ones. One function
// of the figure's own margin: the charts of a row keep one top margin and their rows line up,
// and Plotly's automargin, which would grow each chart's by its own labels and differently
// from one drawing to the next, has nothing to grow.
function presentedTop(top, tickPx) {
  return tickPx > PRESENTER_TICK_PX ? Math.ceil(top * tickPx / PRESENTER_TICK_PX) : top;
}

// The figure (its data and layout, changed in place) in presenter mode's type: bigger fonts,
// tick labels sized for a page `pageWidth` px wide (presenterTickPx), the margins widened for
// the bigger labels (Plotly's automargin would widen them too, but only by drawing the chart a
// second time; the cells keep the height the figure gave them) and, with `grow`, a taller
// figure.
function presented(data, layout, grow, pageWidth) {
  const tickPx = presenterTickPx(pageWidth);
  layout.font = Object.assign({}, layout.font, { size: PRESENTER_FONT_PX });
  if (grow) layout.height = Math.trunc((layout.height || 300) * PRESENTER_GROW);
  for (const name of ["xaxis", "yaxis", ...Object.keys(layout)]) {
    if (!/^[xy]axis\d*$/.test(name)) continue;
    layout[name] = Object.assign({}, layout[name]);
    layout[name].tickfont = Object.assign({}, layout[name].tickfont, { size: tickPx });
  }
  if (layout.margin) {
    layout.margin = Object.assign({}, layout.margin);
    for (const side of ["l", "r"]) {
      if (layout.margin[side] != null) {
        layout.margin[side] = Math.ceil(layout.margin[side] * tickPx / TICK_PX);
      }
    }
    if (layout.margin.t != null) {
      const top = presentedTop(layout.margin.t, tickPx);
      if (layout.height) layout.height += top - layout.margin.t;
      layout.margin.t = top;
    }
  }
  for (const trace of data) {
    if (trace.type !== "heatmap") continue;
    trace.colorbar = Object.assign({}, trace.colorbar);
    trace.colorbar.tickfont = Object.assign({}, trace.colorbar.tickfont,
                                            { size: tickPx });
  }
  layout.sliders = (layout.sliders || []).map((slider) => {
    const value = Object.assign({}, slider.currentvalue);
    value.font = Object.assign({}, value.font, { size: PRESENTER_SLIDER_PX });
    return Object.assign({}, slider, { currentvalue: value });
  });
  if (!layout.sliders.length) delete layout.sliders;
}

// A figure as handed to the component ({data, layout, view}), with the page's view merged into
// its intent (layout.meta.attnviz) and, in presenter mode, presented (in place) for a page
// `pageWidth` px wide, its tick labels' size noted as spec.tickPx (the chart is presented again
// when the page's width asks for another: plotly_draw.js followWidth).
function withView(spec, pageWidth) {
  const view = spec.view || {};
  const meta = Object.assign({}, spec.layout.meta);
  meta.attnviz = Object.assign({}, meta.attnviz, view);
  spec.layout.meta = meta;
  if (view.presenter) {
    presented(spec.data, spec.layout, view.grow !== false, pageWidth);
    spec.tickPx = presenterTickPx(pageWidth);
  }
  return spec;
}
