// attnviz's matrix grid: one <input> per cell; an edit is sent when Enter (or Tab, or leaving
// the cell) commits it — at once, where st.data_editor waits 150 ms (benchmarks/
// bench_grid_commit.py). What is sent is every edit of this grid so far, in st.data_editor's
// shape ({"edited_rows": {row: {column: text}}}), as the state value "edits"; the server parses
// the texts (attnviz/ui/editors.py). A rerun calls this function again with the same data: the
// grid stays as it is, so nothing typed is lost; new data (another key) draws it afresh.

function send(grid) {
  grid.__send("edits", { edited_rows: grid.__edits });
}

// record the cell's text as an edit when it differs from what the grid last had there
function commit(grid, input) {
  if (input.value === input.dataset.committed) return false;
  input.dataset.committed = input.value;
  const r = input.dataset.row;
  (grid.__edits[r] = grid.__edits[r] || {})[input.dataset.col] = input.value;
  return true;
}

function cellAt(grid, r, c) {
  return grid.querySelector(`input[data-r="${r}"][data-c="${c}"]`);
}

function move(grid, input, dr, dc) {
  const next = cellAt(grid, Number(input.dataset.r) + dr, Number(input.dataset.c) + dc);
  if (next) {
    next.focus();
    next.select();
  }
}

// a block copied from a spreadsheet (tab-separated columns, one line per row) fills the cells
// from this one rightwards and down; what falls outside the matrix is dropped
function paste(grid, input, text) {
  const lines = text.replace(/\r\n?/g, "\n").replace(/\n$/, "").split("\n");
  let changed = false;
  lines.forEach((line, i) => {
    line.split("\t").forEach((value, j) => {
      const cell = cellAt(grid, Number(input.dataset.r) + i, Number(input.dataset.c) + j);
      if (!cell || cell.readOnly) return;
      cell.value = value.trim();
      changed = commit(grid, cell) || changed;
    });
  });
  if (changed) send(grid);
}

function draw(parent, spec) {
  const grid = document.createElement("table");
  grid.className = "attnviz-grid" + (spec.big ? " attnviz-grid-big" : "");
  grid.__edits = {};
  const head = grid.createTHead().insertRow();
  head.appendChild(document.createElement("th"));
  spec.cols.forEach((label) => {
    const th = document.createElement("th");
    th.textContent = label;
    head.appendChild(th);
  });
  const body = grid.createTBody();
  spec.cells.forEach((row, r) => {
    const tr = body.insertRow();
    const th = document.createElement("th");
    th.textContent = spec.rows[r];
    tr.appendChild(th);
    row.forEach((text, c) => {
      const input = document.createElement("input");
      input.value = input.dataset.committed = text;
      input.dataset.r = r;
      input.dataset.c = c;
      input.dataset.row = String(r);
      input.dataset.col = spec.cols[c];
      input.readOnly = spec.disabled;
      input.spellcheck = false;
      input.autocomplete = "off";
      input.setAttribute("aria-label", `${spec.label}: ${spec.rows[r]}, ${spec.cols[c]}`);
      input.addEventListener("keydown", (event) => {
        if (event.key === "Enter") {
          event.preventDefault();
          if (commit(grid, input)) send(grid);
          move(grid, input, event.shiftKey ? -1 : 1, 0);
        } else if (event.key === "Escape") {
          input.value = input.dataset.committed;
        } else if (event.key === "ArrowUp" || event.key === "ArrowDown") {
          event.preventDefault();
          if (commit(grid, input)) send(grid);
          move(grid, input, event.key === "ArrowUp" ? -1 : 1, 0);
        }
      });
      input.addEventListener("change", () => {
        if (commit(grid, input)) send(grid);
      });
      input.addEventListener("paste", (event) => {
        const text = (event.clipboardData || window.clipboardData).getData("text");
        if (!/[\t\n]/.test(text.replace(/\s+$/, ""))) return; // one value: the input's own paste
        event.preventDefault();
        paste(grid, input, text);
      });
      tr.insertCell().appendChild(input);
    });
  });
  const box = document.createElement("div");
  box.className = "attnviz-grid-box";
  box.appendChild(grid);
  parent.appendChild(box);
  return grid;
}

export default function (component) {
  const { data, parentElement, setStateValue } = component;
  const spec = typeof data === "string" ? JSON.parse(data) : data;
  const text = spec.sig; // a digest of what the grid is drawn from (grid.py)
  let grid = parentElement.querySelector(":scope > .attnviz-grid-box > table.attnviz-grid");
  if (grid && grid.__data !== text) {
    grid.parentElement.remove(); // other data under the same key: start again from it
    grid = null;
  }
  if (!grid) {
    grid = draw(parentElement, spec);
    grid.__data = text;
  }
  grid.__send = setStateValue;
}
