// attnviz's guided-lecture keys: → sends "next", ← sends "back" (the trigger value "action";
// attnviz/ui/lecture_bar.py moves the lecture). One listener on the document for the page's
// whole life; each render hands it the newest sender and host element. Keys are left alone
// while the focus is somewhere a person types or moves a value with the arrows (an input, a
// text area, a select, an editable element, a slider, a list box, a tab, a chart), with a
// modifier held, when something else already handled them, or once the bar is gone.

const TYPING = [
  "input", "textarea", "select", "[contenteditable]", "[role='slider']", "[role='combobox']",
  "[role='listbox']", "[role='option']", "[role='spinbutton']", "[role='tab']",
  "[role='radio']", "[role='menu']", "[role='menuitem']", "[role='grid']", ".js-plotly-plot",
].join(", ");

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

export default function (component) {
  const { parentElement, setTriggerValue } = component;
  const keys = window.__attnvizLectureKeys || (window.__attnvizLectureKeys = {});
  keys.host = parentElement;
  keys.send = setTriggerValue;
  if (!keys.listening) {
    document.addEventListener("keydown", onKey);
    keys.listening = true;
  }
}
