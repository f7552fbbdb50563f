// attnviz's guided-lecture keys: → sends "next", ← sends "back" (the trigger value "action";
// attnviz/ui/lecture_bar.py moves the lecture). One listener on the document for the page's
// whole life; each render hands it the newest sender and host element. Keys are left alone
// while the focus is somewhere a person types or moves a value with the arrows (an input, a
// text area, a select, an editable element, a slider, a list box, a tab reached with the Tab
// key, a chart), with a modifier held, when something else already handled them, or once the
// bar is gone.
//
// A step that names a chart (data.show, the chart's Streamlit key) brings it up under the
// bar once when the step opens: the chart is looked for (up to FIND_MS) and kept in place while
// the page above it is still drawing (SETTLE_MS from when it is first there), until the person
// scrolls, clicks or types.

const TYPING = [
  "input", "textarea", "select", "[contenteditable]", "[role='slider']", "[role='combobox']",
  "[role='listbox']", "[role='option']", "[role='spinbutton']", "[role='tab']",
  "[role='radio']", "[role='menu']", "[role='menuitem']", "[role='grid']", ".js-plotly-plot",
].join(", ");

const SETTLE_MS = 6000;
const FIND_MS = 30000; // a page still running (a loaded machine) may send the chart late
const TICK_MS = 150;
const GAP_PX = 48; // room above the chart for its title

function bringUp(show, id) {
  const keys = window.__attnvizLectureKeys;
  if (!show || keys.shown === id) return;
  keys.shown = id;
  const started = Date.now();
  let found = null; // when the chart was first there: SETTLE_MS count from then
  let stopped = false;
  const stop = () => { stopped = true; };
  const events = ["wheel", "touchstart", "mousedown", "keydown"];
  events.forEach((name) => document.addEventListener(name, stop, { once: true, capture: true }));
  const tick = () => {
    const now = Date.now();
    if (stopped || keys.shown !== id || now - (found ?? started) > (found ? SETTLE_MS : FIND_MS)) {
      events.forEach((name) => document.removeEventListener(name, stop, { capture: true }));
      return;
    }
    const target = document.querySelector(`.st-key-${CSS.escape(show)}`);
    const main = document.querySelector("[data-testid='stMain']");
    const bar = document.querySelector(".st-key-lecture_bar");
    if (target && main && target.getBoundingClientRect().height > 0) {
      found = found ?? now;
      // under the sticky bar (lecture_bar.LECTURE_CSS: 3.75rem from the top), whatever the
      // bar's place now: measured from where it sticks, a bar scrolled away cannot run off
      const rem = parseFloat(getComputedStyle(document.documentElement).fontSize) || 16;
      const below = main.getBoundingClientRect().top + 3.75 * rem + (bar ? bar.offsetHeight : 0);
      const off = target.getBoundingClientRect().top - below - GAP_PX;
      if (Math.abs(off) > 2) main.scrollBy({ top: off, behavior: "instant" });
    }
    setTimeout(tick, TICK_MS);
  };
  tick();
}

function typing(event) {
  const path = event.composedPath ? event.composedPath() : [event.target];
  return path.some((node) => node instanceof Element
    && (node.isContentEditable || node.matches(TYPING)));
}

function onKey(event) {
  if (event.key !== "ArrowRight" && event.key !== "ArrowLeft") return;
  if (event.defaultPrevented || event.altKey || event.ctrlKey || event.metaKey
      || event.shiftKey || event.repeat) return;
  const keys = window.__attnvizLectureKeys;
  if (!keys || !keys.host || !keys.host.isConnected || typing(event)) return;
  event.preventDefault();
  keys.send("action", event.key === "ArrowRight" ? "next" : "back");
}

// A tab last pressed with the mouse (the Playground's focus tabs) leaves the arrows to the
// lecture, where the lecturer meant the next step: caught before the tabs' own arrow keys (which
// move along the tabs), in the capture phase. A tab reached with the Tab key keeps its arrows.
function onPointer(event) {
  const keys = window.__attnvizLectureKeys;
  keys.pointerTab = event.target instanceof Element && event.target.closest("[role='tab']");
}

function onTabArrow(event) {
  const keys = window.__attnvizLectureKeys;
  if (event.key === "Tab") keys.pointerTab = null;
  if (event.key !== "ArrowRight" && event.key !== "ArrowLeft") return;
  if (event.altKey || event.ctrlKey || event.metaKey || event.shiftKey || event.repeat) return;
  if (!keys.host || !keys.host.isConnected || !keys.pointerTab) return;
  if (!(event.target instanceof Element) || event.target.closest("[role='tab']")
      !== keys.pointerTab) return;
  event.preventDefault();
  event.stopPropagation();
  keys.send("action", event.key === "ArrowRight" ? "next" : "back");
}

export default function (component) {
  const { data, parentElement, setTriggerValue } = component;
  const keys = window.__attnvizLectureKeys || (window.__attnvizLectureKeys = {});
  keys.host = parentElement;
  keys.send = setTriggerValue;
  if (!keys.listening) {
    document.addEventListener("keydown", onKey);
    document.addEventListener("pointerdown", onPointer, true);
    document.addEventListener("keydown", onTabArrow, true);
    keys.listening = true;
  }
  const spec = (typeof data === "string" ? JSON.parse(data) : data) || {};
  bringUp(spec.show, spec.id);
}
