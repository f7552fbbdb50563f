// attnviz's matrix grid: one <input> per cell; an edit is sent when Enter (or Tab, or leaving
// the cell) commits it — at once, where st.data_editor waits 150 ms (benchmarks/
// bench_grid_commit.py). What is sent is every edit of this grid so far, in st.data_editor's
// shape ({"edited_rows": {row: {column: text}}}), as the state value "edits"; the server parses
// the texts (attnviz/ui/editors.py). A rerun calls this function again with the same data: the
// grid stays as it is, so nothing typed is lost; new data (another key) draws it afresh.
//
// Only the rows in view (and a few around them) are in the page: a 256-token matrix would
// otherwise put 16,384 inputs in it, and every later rerun paid for laying them out. The texts
// live in grid.__text (what each cell shows) and grid.__committed (what was last sent).

const SPARE = 6; // rows drawn beyond the visible ones, above and below

function send(grid) {
  grid.__send("edits", { edited_rows: grid.__edits });
}

// record cell (r, c)'s text as an edit when it differs from what was last committed there
function commit(grid, r, c) {
  const text = grid.__text[r][c];
  if (text === grid.__committed[r][c]) return false;
  grid.__committed[r][c] = text;
  (grid.__edits[String(r)] = grid.__edits[String(r)] || {})[grid.__spec.cols[c]] = text;
  return true;
}

function inputAt(grid, r, c) {
  return grid.querySelector(`input[data-r="${r}"][data-c="${c}"]`);
}

// focus cell (r, c), scrolling its row into the drawn window first
function focusCell(grid, r, c) {
  if (r < 0 || r >= grid.__text.length) return;
  let input = inputAt(grid, r, c);
  if (!input) {
    grid.__box.scrollTop = Math.max(0, (r - 2) * grid.__rowPx);
    render(grid);
    input = inputAt(grid, r, c);
  }
  if (input) {
    input.focus();
    input.select();
  }
}

function onKey(grid, input, event) {
  const r = Number(input.dataset.r), c = Number(input.dataset.c);
  if (event.key === "Enter" || event.key === "ArrowUp" || event.key === "ArrowDown") {
    event.preventDefault();
    if (commit(grid, r, c)) send(grid);
    const up = event.key === "ArrowUp" || (event.key === "Enter" && event.shiftKey);
    focusCell(grid, r + (up ? -1 : 1), c);
  } else if (event.key === "Escape") {
    input.value = grid.__text[r][c] = grid.__committed[r][c];
  }
}

// a block copied from a spreadsheet (tab-separated columns, one line per row) fills the cells
// from this one rightwards and down; what falls outside the matrix is dropped
function paste(grid, r0, c0, text) {
  const lines = text.replace(/\r\n?/g, "\n").replace(/\n$/, "").split("\n");
  let changed = false;
  lines.forEach((line, i) => {
    line.split("\t").forEach((value, j) => {
      const r = r0 + i, c = c0 + j;
      if (r >= grid.__text.length || c >= grid.__spec.cols.length) return;
      grid.__text[r][c] = value.trim();
      changed = commit(grid, r, c) || changed;
      const input = inputAt(grid, r, c);
      if (input) input.value = grid.__text[r][c];
    });
  });
  if (changed) send(grid);
}

function makeInput(grid, r, c) {
  const spec = grid.__spec;
  const input = document.createElement("input");
  input.value = grid.__text[r][c];
  input.dataset.r = r;
  input.dataset.c = c;
  input.readOnly = spec.disabled;
  input.spellcheck = false;
  input.autocomplete = "off";
  input.setAttribute("aria-label", `${spec.label}: ${spec.rows[r]}, ${spec.cols[c]}`);
  input.addEventListener("input", () => { grid.__text[r][c] = input.value; });
  input.addEventListener("keydown", (event) => onKey(grid, input, event));
  input.addEventListener("change", () => { if (commit(grid, r, c)) send(grid); });
  input.addEventListener("paste", (event) => {
    const text = (event.clipboardData || window.clipboardData).getData("text");
    if (!/[\t\n]/.test(text.replace(/\s+$/, ""))) return; // one value: the input's own paste
    event.preventDefault();
    paste(grid, r, c, text);
  });
  return input;
}

function makeRow(grid, r) {
  const tr = document.createElement("tr");
  const th = document.createElement("th");
  th.textContent = th.title = grid.__spec.rows[r]; // a long label is cut: hover shows it
  tr.appendChild(th);
  grid.__text[r].forEach((_, c) => tr.insertCell().appendChild(makeInput(grid, r, c)));
  return tr;
}

function spacer(grid, rows) {
  const tr = document.createElement("tr");
  const td = tr.insertCell();
  td.colSpan = grid.__spec.cols.length + 1;
  td.className = "attnviz-grid-spacer";
  td.style.height = `${rows * grid.__rowPx}px`;
  return tr;
}

// draw the rows in view (and SPARE around them) between two spacers of the others' height
function render(grid) {
  const total = grid.__text.length, box = grid.__box;
  const view = Math.ceil((box.clientHeight || 400) / grid.__rowPx);
  const first = Math.max(0, Math.floor(box.scrollTop / grid.__rowPx) - SPARE);
  const last = Math.min(total, first + view + 2 * SPARE);
  if (grid.__drawn && grid.__drawn[0] === first && grid.__drawn[1] === last) return;
  const focused = document.activeElement;
  if (focused && focused.dataset && grid.contains(focused)) {
    const r = Number(focused.dataset.r), c = Number(focused.dataset.c);
    if (commit(grid, r, c)) send(grid); // its row may leave the window: keep what was typed
  }
  grid.__drawn = [first, last];
  const body = grid.tBodies[0];
  const rows = [];
  if (first > 0) rows.push(spacer(grid, first));
  for (let r = first; r < last; r++) rows.push(makeRow(grid, r));
  if (last < total) rows.push(spacer(grid, total - last));
  body.replaceChildren(...rows);
}

function draw(parent, spec) {
  const box = document.createElement("div");
  box.className = "attnviz-grid-box";
  const grid = document.createElement("table");
  grid.className = "attnviz-grid" + (spec.big ? " attnviz-grid-big" : "");
  Object.assign(grid, {
    __spec: spec, __box: box, __edits: {}, __drawn: null,
    __text: spec.cells.map((row) => row.slice()),
    __committed: spec.cells.map((row) => row.slice()),
  });
  const head = grid.createTHead().insertRow();
  head.appendChild(document.createElement("th"));
  spec.cols.forEach((label) => {
    const th = document.createElement("th");
    th.textContent = label;
    head.appendChild(th);
  });
  // a grid drawn again under its key (moved on the page) starts from the edits the server
  // holds: they are sent again with the next edit, so none is dropped
  Object.entries(spec.edits || {}).forEach(([row, cells]) => {
    const r = Number(row);
    Object.entries(cells || {}).forEach(([col, text]) => {
      const c = spec.cols.indexOf(col);
      if (!(r >= 0 && r < grid.__text.length) || c < 0) return;
      grid.__text[r][c] = grid.__committed[r][c] = String(text ?? "");
      (grid.__edits[String(r)] = grid.__edits[String(r)] || {})[col] = grid.__text[r][c];
    });
  });
  grid.createTBody();
  box.appendChild(grid);
  parent.appendChild(box);
  // one row's height, measured once with the first row drawn
  grid.__rowPx = 32;
  if (spec.cells.length) {
    grid.tBodies[0].replaceChildren(makeRow(grid, 0));
    grid.__rowPx = grid.tBodies[0].rows[0].getBoundingClientRect().height || 32;
  }
  render(grid);
  box.addEventListener("scroll", () => render(grid), { passive: true });
  return grid;
}

export default function (component) {
  const { data, parentElement, setStateValue } = component;
  const spec = typeof data === "string" ? JSON.parse(data) : data;
  let grid = parentElement.querySelector(":scope > .attnviz-grid-box > table.attnviz-grid");
  if (grid && grid.__spec.sig !== spec.sig) {
    grid.parentElement.remove(); // other data under the same key: start again from it
    grid = null;
  }
  grid = grid || draw(parentElement, spec);
  grid.__send = setStateValue;
}
