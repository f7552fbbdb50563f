// attnviz's Plotly chart: drawn once, then updated in place with Plotly.react.
//
// st.plotly_chart remounts a chart whenever its figure changes (Streamlit's element id hashes
// the figure), so every edit draws every changed chart from scratch, twice. This component is
// identified by its key alone: Streamlit calls the function below again with the new figure,
// and Plotly.react updates the same <div>. plotly.min.js comes from this server's static files
// (attnviz/ui/plotly_view.py copies the installed plotly package's own copy there): offline.
const PLOTLY_URL = "app/static/plotly.min.js";

function loadPlotly() {
  if (window.Plotly) return Promise.resolve(window.Plotly);
  if (!window.__attnvizPlotly) {
    window.__attnvizPlotly = new Promise((resolve, reject) => {
      const script = document.createElement("script");
      script.src = PLOTLY_URL;
      script.onload = () => resolve(window.Plotly);
      script.onerror = () => {
        window.__attnvizPlotly = null; // let the next draw try again
        reject(new Error("plotly.min.js did not load"));
      };
      document.head.appendChild(script);
    });
  }
  return window.__attnvizPlotly;
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

// The slider of a figure with frames steps through them in the browser; its release sends the
// name of the step's frame (its label unless the figure has several sliders) as the trigger
// value "slider", when the chart asks for it.
// the orientation of every trace's colour bar, to compare two figures
function barSides(data) {
  return (data || []).map((t) => (t.colorbar && t.colorbar.orientation) || "v").join();
}

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

export default function (component) {
  const { data, parentElement, setTriggerValue } = component;
  let div = parentElement.querySelector(":scope > div.attnviz-chart");
  if (!div) {
    div = document.createElement("div");
    div.className = "attnviz-chart";
    parentElement.appendChild(div);
    // follow the column's width (sidebar opened or closed, window resized): once the width
    // has been still for a moment, redraw if the chart was drawn at another width — also
    // when the change came while plotly.js was loading or drawing (presenter mode closing
    // the sidebar during the rerun that redraws every chart)
    let timer = null;
    div.__attnvizSettle = (tries = 3) => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        const now = Math.round(div.getBoundingClientRect().width);
        if (tries > 0 && now && !div.__attnvizOwnWidth && window.Plotly && div._fullLayout &&
            Math.abs(now - Math.round(div._fullLayout.width)) > 1) {
          // the new width only: Plotly.Plots.resize would also drop the figure's own height,
          // and a chart redrawn while its tab or column was collapsed then stayed 0 px tall
          window.Plotly.relayout(div, { width: now }).then(() => div.__attnvizSettle(tries - 1));
        }
      }, 150);
    };
    new ResizeObserver(() => div.__attnvizSettle()).observe(div);
  }
  // the figure's JSON arrives as UTF-8 bytes (a string, should Streamlit ever decode it)
  const spec = JSON.parse(typeof data === "string" ? data : new TextDecoder().decode(data));
  // not Plotly's own "responsive" (its window-resize handler is Plots.resize, see above): the
  // ResizeObserver above follows the column's width
  const config = Object.assign({}, spec.config, { responsive: false });
  div.__attnvizOwnWidth = Boolean(spec.layout && spec.layout.width);  // a figure with its own width
  div.__attnvizSend = spec.clickable ? setTriggerValue : null;
  div.__attnvizSendSlider = spec.sliderEvents ? setTriggerValue : null;
  const figure = { data: spec.data, layout: spec.layout, config: config };
  if (spec.frames && spec.frames.length) figure.frames = spec.frames;
  loadPlotly()
    .then((Plotly) => {
      // Plotly.react leaves a vertical colour bar's tick labels behind when the bar turns
      // horizontal (a matrix shrinking to one or two rows): draw such a change afresh
      if (div.data && barSides(div.data) !== barSides(spec.data)) {
        Plotly.purge(div);
        div.__attnvizClicks = div.__attnvizSlider = false;  // purge dropped their listeners
      }
      return Plotly.react(div, figure);
    })
    .then(() => {
      div.__attnvizSettle();  // the width may have moved while this drawing was under way
      if (spec.clickable) sendClicks(div);
      if (spec.sliderEvents) sendSliderEnds(div);
    })
    .catch((err) => {
      div.textContent = "This chart could not be drawn: " + err.message +
        ". Reload the page; if it persists, start attnviz with the README's command.";
    });
}
