// attnviz's chart component, its sliders: a figure's frames stepped through in the browser.

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

// ---- A slider is the control of its value: stepped in the browser ---------------------------
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
  // new object copies the mark) would leave the slider marked for good, and a marked slider
  // ignores Play's frames (Learn's Play would run to the end under a slider stuck on the
  // clicked step): every slider is unmarked on the release
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
