// attnviz's chart component, what it draws when: a figure it already has is not drawn again,
// and one far from the screen or in a hidden tab is drawn when it is seen.
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
