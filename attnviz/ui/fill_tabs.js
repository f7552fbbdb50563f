// The Playground's hidden focus tabs, filled after an edit (attnviz/ui/playground_view.py): a run
// after an edit fills the open tab alone, so the edit repaints as fast as with one focus; this
// component, sent in that run, waits until the page's charts are still (no chart drawing or
// waiting to draw for QUIET_MS: plotly_draw.js counts them in window.__attnvizDraws) and the
// person too (no key or button pressed for INPUT_QUIET_MS: cells typed one after another cost
// one run each, not two) and then asks for one more run, which changes nothing and so fills
// every tab. A tab clicked after it shows its charts at the click, with no run to wait for. It
// asks once per edit (data: a count the server keeps), never while the page is hidden, and
// after ASK_ANYWAY_MS without stillness (a machine too busy to stay still) it asks anyway, so
// the tabs are filled and the component does not stay waiting on the page.

const QUIET_MS = 150; // no chart drawn or waiting to draw for this long
const INPUT_QUIET_MS = 400; // nor a key pressed or a button pressed (a person still editing)
const TICK_MS = 50;
const ASK_ANYWAY_MS = 20000;

// the time of the page's last key or pointer press (one listener for the page's life)
function lastInput() {
  if (window.__attnvizLastInput === undefined) {
    window.__attnvizLastInput = 0;
    const seen = () => { window.__attnvizLastInput = performance.now(); };
    ["keydown", "pointerdown"].forEach((name) => document.addEventListener(name, seen, true));
  }
  return window.__attnvizLastInput;
}

// true when the page's charts and the person have been still long enough (since `started` too)
function still(started) {
  const now = performance.now();
  const draws = window.__attnvizDraws || { busy: 0, last: 0 };
  return draws.busy === 0 && now - Math.max(draws.last, started) >= QUIET_MS
    && now - lastInput() >= INPUT_QUIET_MS;
}

export default function (component) {
  const { data, parentElement, setTriggerValue } = component;
  if (parentElement.__attnvizFillFor === data) return;
  parentElement.__attnvizFillFor = data;
  lastInput();
  const started = performance.now();
  const tick = () => {
    const mine = parentElement.__attnvizFillFor === data && parentElement.isConnected;
    if (!mine) return;
    if (!document.hidden && (still(started) || performance.now() - started > ASK_ANYWAY_MS)) {
      setTriggerValue("fill", data);
      return;
    }
    setTimeout(tick, TICK_MS);
  };
  setTimeout(tick, TICK_MS);
}
