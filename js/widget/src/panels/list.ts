/**
 * The List panel: the entries of every branch as a flat list, filtered by role, kind, model, tool,
 * annotation tag and score, errors and the active path, sorted by tree order, time, cost or tokens.
 * Python filters and sorts ({action: "query"}, durable_nb.widget.listing) and sends one page of items
 * and the values each filter can take; nothing here holds the whole log. A click opens the entry in
 * the tree (revealed and selected).
 */
import { chipEls } from "../chips";
import type { Ctx } from "../context";
import { button, h } from "../dom";
import { costText, short } from "../format";
import { asReply, type Facets, type Filter, type ListItem, type QueryReply, type SortKey } from "../protocol";
import type { Panel } from "./panel";

const SELECTS: [keyof Facets, string][] = [
  ["role", "role"],
  ["kind", "kind"],
  ["model", "model"],
  ["tool", "tool"],
  ["tag", "annotation tag"],
];
const SORTS: [SortKey, string][] = [
  ["tree", "tree order"],
  ["time", "time"],
  ["cost", "cost (most first)"],
  ["tokens", "tokens (most first)"],
];

/** Open entry `id` in the tree: its tab, its row revealed (Python locates a line not fetched), selected. */
export function openInTree(ctx: Ctx, id: string, index = -1): void {
  if (ctx.model.get("view") !== "tree") ctx.setView("tree");
  if (index >= 0) ctx.hooks.scrollTo(index);
  else ctx.hooks.reveal(id);
  ctx.select(id);
}

export function listPanel(ctx: Ctx): Panel {
  const { model } = ctx;
  const el = h("div", "dnb-panel dnb-list-panel");
  const form = h("div", "dnb-list-filters");
  const selects = new Map<keyof Facets, HTMLSelectElement>();
  for (const [key, label] of SELECTS) {
    const lab = h("label", `dnb-list-${key}`);
    const sel = h("select");
    sel.dataset.key = key;
    sel.append(new Option(`any ${label}`, ""));
    sel.addEventListener("change", () => ask(0));
    lab.append(document.createTextNode(`${label} `), sel);
    selects.set(key, sel);
    form.append(lab);
  }
  const score = h("input", "dnb-list-score");
  score.type = "number";
  score.step = "any";
  score.placeholder = "min score";
  score.setAttribute("aria-label", "annotation score at least");
  score.addEventListener("change", () => ask(0));
  const boxes: [keyof Filter, string, HTMLInputElement][] = [];
  for (const [key, text] of [
    ["error", "errors only"],
    ["on_path", "on the active path"],
  ] as [keyof Filter, string][]) {
    const lab = h("label", `dnb-list-${key}`);
    const box = h("input");
    box.type = "checkbox";
    box.addEventListener("change", () => ask(0));
    lab.append(box, document.createTextNode(text));
    boxes.push([key, text, box]);
    form.append(lab);
  }
  const sortSel = h("select", "dnb-list-sort");
  for (const [key, text] of SORTS) sortSel.append(new Option(`sort: ${text}`, key));
  sortSel.addEventListener("change", () => ask(0));
  form.append(score, sortSel);
  const count = h("div", "dnb-list-count dnb-muted");
  const table = h("div", "dnb-list");
  const moreBtn = button("dnb-action dnb-list-more", "Show more", () => ask(items.length));
  el.append(form, count, table, moreBtn);

  let seq = 0;
  let items: ListItem[] = [];
  let askedRev = -1;
  let facetsSeen = "";

  function filter(): Filter {
    const f: Filter = {};
    for (const [key, sel] of selects) if (sel.value) f[key] = sel.value;
    if (score.value.trim() !== "" && isFinite(Number(score.value))) f.min_score = Number(score.value);
    for (const [key, , box] of boxes) if (box.checked) (f as Record<string, unknown>)[key] = true;
    return f;
  }

  /** Ask Python for the items from `start` on (0: a new query; the list starts over). */
  function ask(start: number): void {
    if (ctx.kernel.staleReason()) return;
    seq += 1;
    askedRev = ctx.tree.rev;
    if (!start) count.textContent = "filtering…";
    model.send({ action: "query", query: filter(), sort: sortSel.value as SortKey, start, seq });
  }

  function onQuery(r: QueryReply): void {
    if (r.seq !== seq) return; // an answer to an older query
    items = r.start ? [...items.slice(0, r.start), ...r.items] : r.items;
    drawFacets(r.facets);
    count.textContent = `${r.total} ${r.total === 1 ? "entry matches" : "entries match"}${r.total > items.length ? ` (first ${items.length} listed)` : ""}`;
    moreBtn.hidden = items.length >= r.total;
    table.replaceChildren(...items.map(itemEl));
  }

  function drawFacets(f: Facets): void {
    const key = JSON.stringify(f);
    if (key === facetsSeen) return;
    facetsSeen = key;
    for (const [name, sel] of selects) {
      const was = sel.value;
      sel.replaceChildren(sel.options[0]);
      for (const v of f[name] || []) sel.append(new Option(v, v));
      sel.value = (f[name] || []).includes(was) ? was : "";
    }
  }

  function itemEl(it: ListItem): HTMLElement {
    const r = it.row;
    const div = h("div", "dnb-list-item");
    div.dataset.id = it.id;
    div.tabIndex = 0;
    if (it.on) div.classList.add("dnb-active");
    if (it.id === ctx.selected()) div.classList.add("dnb-selected");
    div.append(h("span", `dnb-label dnb-role-${r.role || r.type}`, r.what || r.type), h("span", "dnb-id", short(r.id)));
    div.append(...chipEls(ctx.namesOf(r.id), it.chips));
    if (r.tools) div.append(h("span", "dnb-badge dnb-tool", `calls ${r.tools.join(", ")}`));
    if (r.is_error) div.append(h("span", "dnb-badge dnb-failed", "error"));
    const cost = costText(r);
    if (cost) div.append(h("span", `dnb-badge dnb-cost${r.cost === "cost unknown" ? " dnb-unknown" : ""}`, cost));
    if (r.created_at) div.append(h("span", "dnb-muted dnb-list-time", r.created_at.replace("T", " ").slice(0, 19)));
    div.append(h("span", "dnb-preview", r.preview));
    div.title = `${r.id}${r.created_at ? " · " + r.created_at : ""}: open it in the tree`;
    const open = () => openInTree(ctx, it.id, it.index);
    div.addEventListener("click", open);
    div.addEventListener("keydown", (ev) => {
      if (ev.key === "Enter") open();
    });
    return div;
  }

  const onCustom = (msg: unknown) => {
    const r = asReply(msg);
    if (r?.reply === "query") onQuery(r);
  };
  model.on("msg:custom", onCustom);
  return {
    name: "list",
    tab: "List",
    el,
    draw() {
      if (model.get("view") === "list" && askedRev !== ctx.tree.rev) ask(0); // the log changed: filter again
      for (const d of table.querySelectorAll<HTMLElement>(".dnb-list-item")) d.classList.toggle("dnb-selected", d.dataset.id === ctx.selected());
    },
    shown() {
      if (askedRev !== ctx.tree.rev || !items.length) ask(0);
    },
    dispose() {
      model.off("msg:custom", onCustom);
    },
  };
}
