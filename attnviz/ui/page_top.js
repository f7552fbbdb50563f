// A page entered from the sidebar starts at its top (attnviz/ui/presenter.py page_top): the
// main area is one scrolled element and the new page sometimes kept the scroll position of the
// page before. Installed once per browser page; for 2 s after the address changes, the main
// area is held at its top unless the user scrolls, types or presses in the main area first (a
// click on one of the new page's controls, or its scroll bar dragged: the user has taken over,
// and a scroll that follows, by the bar or brought by the page, stays). A press elsewhere (the
// sidebar's link itself, presenter mode closing the sidebar) keeps the hold. Static code, no
// data.
export default function () {
  if (window.__attnvizPageTop) return;
  window.__attnvizPageTop = true;
  const main = () => document.querySelector('[data-testid="stMain"]');
  let path = window.location.pathname, until = 0;
  for (const kind of ["wheel", "keydown", "touchstart"]) {
    window.addEventListener(kind, () => { until = 0; }, { passive: true, capture: true });
  }
  window.addEventListener("pointerdown", (event) => {
    const m = main();
    if (m && event.target instanceof Node && m.contains(event.target)) until = 0;
  }, { passive: true, capture: true });
  setInterval(() => {
    if (window.location.pathname !== path) {
      path = window.location.pathname;
      until = performance.now() + 2000;
    }
    const m = main();
    if (m && m.scrollTop && performance.now() < until) m.scrollTop = 0;
  }, 100);
}
