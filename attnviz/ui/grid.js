// attnviz's matrix grid: one <input> per cell; an edit is sent when Enter (or Tab, or leaving
// the cell) commits it — at once, where st.data_editor waits 150 ms (benchmarks/
// bench_grid_commit.py). What is sent is every edit of this grid so far, in st.data_editor's
// shape ({"edited_rows": {row: {column: text}}}), as the state value "edits"; the server parses
// the texts (attnviz/ui/editors.py). A rerun calls this function again with the same data: the
// grid stays as it is, so nothing typed is lost; new data (another key) draws it afresh.
//
// Only the rows in view (and a few around them) are in the page: a 256-token matrix would
// otherwise put 16,384 inputs in it, and every later rerun paid for laying them out. A wide
// matrix (more than WIDE_COLS columns: a real model's x or W_Q, 769 wide for GPT-2 small) draws
// only the columns in view too, between two spacer cells of the others' width, in columns of
// one fixed width; Tab and Shift+Tab move along the row through the columns not drawn. The
// texts live in grid.__text (what each cell shows) and grid.__committed (what was last sent).

const SPARE = 6; // rows drawn beyond the visible ones, above and below
const SPARE_COLS = 4; // columns drawn beyond the visible ones, left and right (a wide grid)
const WIDE_COLS = 48; // more columns than this: only the columns in view are drawn

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

// focus cell (r, c), scrolling its row (and, in a wide grid, its column) into the drawn
// window first
function focusCell(grid, r, c) {
  if (r < 0 || r >= grid.__text.length || c < 0 || c >= grid.__spec.cols.length) return;
  let input = inputAt(grid, r, c);
  if (!input) {
    const [first, last, firstC, lastC] = grid.__drawn || [0, 0, 0, 0];
    if (r < first + SPARE || r >= last - SPARE) {
      grid.__box.scrollTop = Math.max(0, (r - 2) * grid.__rowPx);
    }
    if (grid.__wide && (c < firstC + SPARE_COLS || c >= lastC - SPARE_COLS)) {
      grid.__box.scrollLeft = Math.max(0, (c - 2) * grid.__colPx);
    }
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
  } else if (event.key === "Tab" && grid.__wide) {
    // the next cell may not be drawn: move to it by number (the row's end wraps to the next
    // row; Tab past the last cell leaves the grid as usual)
    const n = grid.__spec.cols.length;
    const at = r * n + c + (event.shiftKey ? -1 : 1);
    if (at < 0 || at >= grid.__text.length * n) return;
    event.preventDefault();
    if (commit(grid, r, c)) send(grid);
    focusCell(grid, Math.floor(at / n), at % n);
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

// the width a cell needs to show `chars` characters whole (the input's padding: grid.css)
function cellWidth(chars) {
  return `calc(${Math.max(chars, 1)}ch + 1rem + 2px)`;
}

// the longest text of each column (its cells as drawn first): the column is at least as wide,
// so no number is cut ("-0.12260960787534714" in a 16-wide real head's x); the grid scrolls
// sideways when they do not fit its box
function columnChars(cells, n) {
  const chars = new Array(n).fill(0);
  for (const row of cells) {
    for (let c = 0; c < n; c++) chars[c] = Math.max(chars[c], String(row[c] ?? "").length);
  }
  return chars;
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
  if (!grid.__wide) input.style.minWidth = cellWidth(grid.__chars[c]); // a wide grid: its CSS
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

// a cell standing for `n` columns not drawn (a wide grid), in the header or a row
function columnSpacer(grid, tag, n) {
  const cell = document.createElement(tag);
  cell.className = "attnviz-grid-spacer";
  cell.style.width = cell.style.minWidth = `${n * grid.__colPx}px`;
  return cell;
}

// the columns drawn: [firstC, lastC); every column unless the grid is wide
function columnsOf(grid) {
  return grid.__drawn ? grid.__drawn.slice(2) : [0, grid.__spec.cols.length];
}

// a row's cells of the columns drawn, with a spacer each side for the columns that are not
function fillRow(grid, tr, tag, cellOf) {
  const n = grid.__spec.cols.length;
  const [firstC, lastC] = columnsOf(grid);
  if (firstC > 0) tr.appendChild(columnSpacer(grid, tag, firstC));
  for (let c = firstC; c < lastC; c++) tr.appendChild(cellOf(c));
  if (lastC < n) tr.appendChild(columnSpacer(grid, tag, n - lastC));
}

function makeRow(grid, r) {
  const tr = document.createElement("tr");
  const th = document.createElement("th");
  th.textContent = th.title = grid.__spec.rows[r]; // a long label is cut: hover shows it
  tr.appendChild(th);
  fillRow(grid, tr, "td", (c) => {
    const td = document.createElement("td");
    td.appendChild(makeInput(grid, r, c));
    return td;
  });
  return tr;
}

function makeHead(grid) {
  const tr = document.createElement("tr");
  tr.appendChild(document.createElement("th"));
  fillRow(grid, tr, "th", (c) => {
    const th = document.createElement("th");
    th.textContent = grid.__spec.cols[c];
    return th;
  });
  return tr;
}

function spacer(grid, rows) {
  const tr = document.createElement("tr");
  const td = tr.insertCell();
  const [firstC, lastC] = columnsOf(grid);
  td.colSpan = lastC - firstC + (firstC > 0) + (lastC < grid.__spec.cols.length) + 1;
  td.className = "attnviz-grid-spacer";
  td.style.height = `${rows * grid.__rowPx}px`;
  return tr;
}

// the columns in view (and SPARE_COLS around them) of a wide grid: [firstC, lastC)
function columnWindow(grid) {
  const n = grid.__spec.cols.length, box = grid.__box;
  if (!grid.__wide) return [0, n];
  const view = Math.ceil((box.clientWidth || 800) / grid.__colPx);
  const firstC = Math.max(0, Math.floor(box.scrollLeft / grid.__colPx) - SPARE_COLS);
  return [firstC, Math.min(n, firstC + view + 2 * SPARE_COLS)];
}

// draw the rows in view (and SPARE around them) between two spacers of the others' height;
// in a wide grid, of those rows the columns in view
function render(grid) {
  const total = grid.__text.length, box = grid.__box;
  const view = Math.ceil((box.clientHeight || 400) / grid.__rowPx);
  const first = Math.max(0, Math.floor(box.scrollTop / grid.__rowPx) - SPARE);
  const last = Math.min(total, first + view + 2 * SPARE);
  const [firstC, lastC] = columnWindow(grid);
  const drawn = [first, last, firstC, lastC];
  if (grid.__drawn && drawn.every((v, i) => v === grid.__drawn[i])) return;
  const focused = document.activeElement;
  let keep = null; // the focused cell, focused again if it is still drawn
  if (focused && focused.dataset && grid.contains(focused)) {
    const r = Number(focused.dataset.r), c = Number(focused.dataset.c);
    if (commit(grid, r, c)) send(grid); // its row may leave the window: keep what was typed
    keep = [r, c];
  }
  const columnsMoved = !grid.__drawn || grid.__drawn[2] !== firstC || grid.__drawn[3] !== lastC;
  grid.__drawn = drawn;
  if (columnsMoved) grid.tHead.replaceChildren(makeHead(grid));
  const body = grid.tBodies[0];
  const rows = [];
  if (first > 0) rows.push(spacer(grid, first));
  for (let r = first; r < last; r++) rows.push(makeRow(grid, r));
  if (last < total) rows.push(spacer(grid, total - last));
  body.replaceChildren(...rows);
  const again = keep && inputAt(grid, keep[0], keep[1]);
  if (again) again.focus({ preventScroll: true });
}

function draw(parent, spec) {
  const box = document.createElement("div");
  box.className = "attnviz-grid-box";
  const grid = document.createElement("table");
  const wide = spec.cols.length > WIDE_COLS;
  grid.className = "attnviz-grid" + (spec.big ? " attnviz-grid-big" : "") +
    (wide ? " attnviz-grid-wide" : "");
  Object.assign(grid, {
    __spec: spec, __box: box, __edits: {}, __drawn: null, __wide: wide,
    __text: spec.cells.map((row) => row.slice()),
    __committed: spec.cells.map((row) => row.slice()),
  });
  grid.createTHead();
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
  grid.__chars = columnChars(grid.__text, spec.cols.length);
  // a wide grid's columns have one width (its spacers stand for the columns not drawn): the
  // longest text of them all
  if (wide) grid.style.setProperty("--attnviz-cell", cellWidth(Math.max(...grid.__chars)));
  grid.createTBody();
  box.appendChild(grid);
  parent.appendChild(box);
  // one row's height (and a wide grid's column width: its CSS fixes it), measured once with
  // the first row drawn (a wide grid: its first few columns)
  grid.__rowPx = 32;
  grid.__colPx = 64;
  if (spec.cells.length) {
    if (wide) grid.__drawn = [0, 1, 0, Math.min(2, spec.cols.length)];
    grid.tBodies[0].replaceChildren(makeRow(grid, 0));
    const row = grid.tBodies[0].rows[0];
    grid.__rowPx = row.getBoundingClientRect().height || 32;
    if (wide) grid.__colPx = row.cells[1].getBoundingClientRect().width || 64;
    grid.__drawn = null;
  }
  render(grid);
  box.addEventListener("scroll", () => render(grid), { passive: true });
  return grid;
}

// The cells of the last grids drawn, by digest: a large grid's rerun comes without its cells
// when the server knows it was drawn (attnviz/ui/grid.py, ELIDE_CELLS); a grid drawn again
// (moved on the page) takes them from here, or asks the server for them.
const CELLS = new Map();
const KEEP_CELLS = 16;

function remember(sig, cells) {
  CELLS.delete(sig);
  CELLS.set(sig, cells);
  while (CELLS.size > KEEP_CELLS) CELLS.delete(CELLS.keys().next().value);
}

export default function (component) {
  const { data, parentElement, setStateValue } = component;
  let spec = typeof data === "string" ? JSON.parse(data) : data;
  let grid = parentElement.querySelector(":scope > .attnviz-grid-box > table.attnviz-grid");
  if (grid && grid.__spec.sig !== spec.sig) {
    grid.parentElement.remove(); // other data under the same key: start again from it
    grid = null;
  }
  if (!grid) {
    const cells = spec.cells ?? CELLS.get(spec.sig);
    if (!cells) { // sent without them and not kept here: ask (the edits the server holds, too)
      setStateValue("edits", { edited_rows: spec.edits || {}, need: spec.sig });
      return;
    }
    remember(spec.sig, cells);
    spec = { ...spec, cells };
    grid = draw(parentElement, spec);
  }
  grid.__send = setStateValue;
}
