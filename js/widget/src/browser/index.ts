/**
 * durable_nb session browser: the front end of durable_nb.widget.SessionBrowser (anywidget's ES module),
 * a bundle of its own (static/browser.js) so the session widget's stays as it is.
 *
 * Python syncs one row per session (`rows`, durable_nb.digests.Digest.row) and where they are; this page
 * draws them as a table, sorts it by a column (the `sort` trait: a column name, "-" first for descending)
 * and asks the kernel to open a row ({action: "open", ref}); the kernel's answer comes back in `status`
 * and `opened`. Every string goes into the DOM through textContent; nothing follows a URL.
 */
import { type BrowserModel, COLUMNS, type Row, sorted } from "./table";

function h<K extends keyof HTMLElementTagNameMap>(tag: K, cls?: string, text?: string): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  if (cls) el.className = cls;
  if (text) el.textContent = text;
  return el;
}

function render({ model, el }: { model: BrowserModel; el: HTMLElement }): () => void {
  const root = h("div", "dnb-browser");
  const head = h("div", "dnb-browser-head");
  const table = h("table", "dnb-browser-table");
  const thead = h("thead");
  const tbody = h("tbody");
  const status = h("div", "dnb-browser-status");
  status.setAttribute("role", "status");
  table.append(thead, tbody);
  root.append(head, table, status);
  el.append(root);

  function open(r: Row): void {
    status.textContent = `opening ${r.name}…`;
    model.send({ action: "open", ref: r.ref });
  }

  function sortBy(name: string): void {
    const now = model.get("sort") ?? "-last";
    // a new column starts descending for numbers and dates (the biggest, the newest first), ascending for text
    const first = name === "name" || name === "models" ? name : `-${name}`;
    model.set("sort", now === first ? (first.startsWith("-") ? name : `-${name}`) : first);
    model.save_changes();
  }

  function draw(): void {
    const rows = model.get("rows") ?? [];
    const sort = model.get("sort") ?? "-last";
    const current = model.get("current") ?? "";
    const opened = model.get("opened") ?? "";
    const stored = rows.filter((r) => !r.read_only).length;
    const logs = rows.length - stored;
    head.textContent =
      `${stored} session${stored === 1 ? "" : "s"} in ${model.get("where") ?? ""}` +
      (logs ? ` · ${logs} log${logs === 1 ? "" : "s"} of other tools` : "") +
      " · click a row to open it read-only (%durable open), a header to sort";
    const tr = h("tr");
    for (const c of COLUMNS) {
      const th = h("th", c.num ? "dnb-num" : "");
      const b = h("button", "dnb-browser-sort", c.title);
      b.type = "button";
      if (c.tip) b.title = c.tip;
      const dir = sort === c.name ? "ascending" : sort === `-${c.name}` ? "descending" : "none";
      th.setAttribute("aria-sort", dir);
      th.dataset.col = c.name;
      if (dir !== "none") b.append(h("span", "dnb-browser-arrow", dir === "ascending" ? " ▲" : " ▼"));
      b.addEventListener("click", () => sortBy(c.name));
      th.append(b);
      tr.append(th);
    }
    thead.replaceChildren(tr);
    const body: HTMLTableRowElement[] = [];
    for (const r of sorted(rows, sort)) {
      const row = h("tr", "dnb-browser-row");
      row.dataset.ref = r.ref;
      row.tabIndex = 0;
      if (r.ref === opened) row.classList.add("dnb-opened");
      if (!r.read_only && r.ref === current) row.classList.add("dnb-current");
      if (r.problem) {
        row.classList.add("dnb-problem");
        const name = h("td", "", r.name);
        const why = h("td", "dnb-browser-why", `unreadable: ${r.problem}`);
        why.colSpan = COLUMNS.length - 1;
        row.append(name, why);
      } else {
        for (const c of COLUMNS) {
          const td = h("td", c.num ? "dnb-num" : "", c.text(r));
          if (c.name === "models") td.title = r.models.join(", ");
          if (c.name === "name") {
            td.title = r.ref;
            if (!r.read_only && r.ref === current) td.append(h("span", "dnb-browser-mark", " (notebook)"));
          }
          row.append(td);
        }
      }
      row.addEventListener("click", () => open(r));
      row.addEventListener("keydown", (ev) => {
        if (ev.key === "Enter") open(r);
        else if (ev.key === "ArrowDown") (row.nextElementSibling as HTMLElement | null)?.focus();
        else if (ev.key === "ArrowUp") (row.previousElementSibling as HTMLElement | null)?.focus();
        else return;
        ev.preventDefault();
      });
      body.push(row);
    }
    tbody.replaceChildren(...body);
    if (!rows.length) tbody.append(Object.assign(h("tr"), { textContent: "no saved sessions yet" }));
    status.textContent = model.get("status") ?? "";
  }

  const events = ["rows", "sort", "opened", "status", "where", "current"].map((k) => `change:${k}`);
  for (const ev of events) model.on(ev, draw);
  draw();
  return () => {
    for (const ev of events) model.off(ev, draw);
  };
}

export default { render };
