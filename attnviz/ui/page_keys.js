// attnviz's presenter page keys: PageDown opens the next page and PageUp the previous one, as a
// presentation clicker sends them, by following the page navigation's own links (the boxes
// ".st-key-page_nav_next" and ".st-key-page_nav_back", attnviz/ui/page_nav.py). One listener on the document for the page's whole life. Keys are left alone
// while the focus is where a person types or moves a value, with a modifier held, when
// something else already handled them, or once the navigation box is gone (presenter mode off,
// a guided lecture running: its → and ← keys move the lecture).

const TYPING = [
  "input", "textarea", "select", "[contenteditable]", "[role='slider']", "[role='combobox']",
  "[role='listbox']", "[role='option']", "[role='spinbutton']", "[role='grid']",
].join(", ");

function typing(event) {
  const path = event.composedPath ? event.composedPath() : [event.target];
  return path.some((node) => node instanceof Element
    && (node.isContentEditable || node.matches(TYPING)));
}

function onKey(event) {
  if (event.key !== "PageDown" && event.key !== "PageUp") return;
  if (event.defaultPrevented || event.altKey || event.ctrlKey || event.metaKey
      || event.shiftKey || event.repeat || typing(event)) return;
  const box = event.key === "PageDown" ? "page_nav_next" : "page_nav_back";
  const link = document.querySelector(`.st-key-${box} a[href]`);
  if (!link) return;
  event.preventDefault();
  link.click();
}

export default function () {
  if (!window.__attnvizPageKeys) {
    document.addEventListener("keydown", onKey);
    window.__attnvizPageKeys = true;
  }
}
