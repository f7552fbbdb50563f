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
// of undefined (reading 'length')" in drawFramework: figures that arrive while plotly.min.js
// is still loading (a preset loaded just after the page opened, on a slow connection or a busy
// server) would all be drawn at once when it comes. So every Plotly call on a chart goes
// through its queue (enqueue), and a chart given several figures while busy draws only the
// newest. The other parts of the component: plotly_fit.js (sizes, pure), plotly_size.js (what
// it measures), plotly_sliders.js, plotly_lazy.js; plotly_view.py joins them into one module.

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


// Plotly.react, given a figure's frames, replaces the chart's frames with them when it updates
// the chart in place, but leaves it none when it draws the chart anew (after a purge: a colour
// bar changing side, a drawing that failed; its drag slider would then step through no frames
// and the chart keep the matrix it had): then they are added
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
    div.__attnvizTickPx = spec.tickPx;  // presenter mode's tick labels, sized for the page
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
      if (tries > 0 && div.__attnvizTickPx && div.__attnvizWanted && !div.__attnvizPending &&
          !div.__attnvizFailed && presenterTickPx(pageWidth()) !== div.__attnvizTickPx) {
        // the window was resized across a size of presenter mode's tick labels: the figure
        // presented again for the page's new width (as it arrived; drawn afresh, not skipped
        // as the frame already shown), its drawing ending with a pass of its own
        div.__attnvizStill = null;
        return draw(div, withView(JSON.parse(div.__attnvizWanted), pageWidth()));
      }
      const now = Math.round(div.getBoundingClientRect().width);
      if (tries > 0 && now && !div.__attnvizOwnWidth && !div.__attnvizFailed &&
          window.Plotly && div._fullLayout &&
          Math.abs(now - Math.round(div._fullLayout.width)) > 1) {
        // the new width only: Plotly.Plots.resize would also drop the figure's own height,
        // and a chart redrawn while its tab or column is collapsed would then stay 0 px tall
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
  const spec = withView(JSON.parse(text), pageWidth());  // the page's view merged into the intent
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
