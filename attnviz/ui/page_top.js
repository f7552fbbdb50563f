// A page entered from the sidebar starts at its top (attnviz/ui/presenter.py page_top): the
// main area is one scrolled element and the new page sometimes kept the scroll position of the
// page before. Installed once per browser page; for 2 s after the address changes, the main
// area is held at its top unless the user scrolls or types first. Static code, no data.
export default function () {
  if (window.__attnvizPageTop) return;
  window.__attnvizPageTop = true;
  const main = () => document.querySelector('[data-testid="stMain"]');
  let path = window.location.pathname, until = 0;
  for (const kind of ["wheel", "keydown", "touchstart"]) {
    window.addEventListener(kind, () => { until = 0; }, { passive: true, capture: true });
  }
  setInterval(() => {
    if (window.location.pathname !== path) {
      path = window.location.pathname;
      until = performance.now() + 2000;
    }
    const m = main();
    if (m && m.scrollTop && performance.now() < until) m.scrollTop = 0;
  }, 100);
}
