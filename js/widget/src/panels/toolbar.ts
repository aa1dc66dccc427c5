/**
 * The bars above the panels: the tabs (one per registered panel), the status line and "Follow leaf";
 * find (Python searches every branch, {action: "search"}; the page walks the hits in drawn order),
 * the kind filter ({action: "filter"}), the picks for a comparison ({action: "compare"}); then the
 * cost line, the error line and the notice (waiting for the kernel).
 */
import type { Ctx } from "../context";
import { button, h } from "../dom";
import { short } from "../format";
import { asReply, type FilterGroup, type SearchReply, type View } from "../protocol";
import type { Panel } from "./panel";

const FILTERS: [FilterGroup, string, string][] = [
  ["custom", "custom entries", "notes and other custom entries (labels, verdicts and annotations are chips on their entries)"],
  ["aside", "progress & hooks", "other tools' bookkeeping records: progress lines, hook output, snapshots"],
  ["tool_result", "tool results", "collapse tool results into the row of the call (and fold them in the model view)"],
];

export interface Toolbar {
  els: HTMLElement[];
  /** show the current view's panel and tab */
  showView(): void;
  draw(): void;
  dispose(): void;
}

export function toolbar(ctx: Ctx, panels: Panel[]): Toolbar {
  const { model } = ctx;
  const bar = h("div", "dnb-bar");
  const tabs = h("div", "dnb-tabs");
  const tabButtons = new Map<View, HTMLButtonElement>();
  for (const p of panels) {
    const b = button("dnb-tab", p.tab, () => ctx.setView(p.name));
    b.dataset.view = p.name;
    tabButtons.set(p.name, b);
    tabs.append(b);
  }
  const status = h("div", "dnb-status");
  const follow = button("dnb-action dnb-follow", "Follow leaf", () => {
    ctx.select("");
    ctx.hooks.reveal(ctx.leaf()); // back to the leaf, wherever a find or a click took the tree
  });
  bar.append(tabs, status, follow);

  // the second bar: find, the kind filter, the entries picked for a comparison
  const tools = h("div", "dnb-tools");
  const find = h("div", "dnb-find");
  const findInput = h("input", "dnb-find-input");
  findInput.type = "search";
  findInput.placeholder = "Find in every branch";
  findInput.setAttribute("aria-label", "Find in every branch (every word, whole words)");
  const findPrev = button("dnb-action dnb-find-prev", "‹", () => go(ctx.found.at - 1));
  const findNext = button("dnb-action dnb-find-next", "›", () => go(ctx.found.at + 1));
  findPrev.title = "Previous match (Shift+Enter)";
  findNext.title = "Next match (Enter)";
  const findCount = h("span", "dnb-find-count");
  find.append(findInput, findPrev, findNext, findCount);

  const filter = h("div", "dnb-filter");
  filter.append(h("span", "", "Hide:"));
  const filterBoxes = new Map<FilterGroup, HTMLInputElement>();
  for (const [group, label, title] of FILTERS) {
    const lab = h("label", `dnb-filter-${group}`);
    const box = h("input");
    box.type = "checkbox";
    box.dataset.group = group;
    box.addEventListener("change", sendFilter);
    lab.title = title;
    lab.append(box, document.createTextNode(label));
    filterBoxes.set(group, box);
    filter.append(lab);
  }

  const pickBar = h("div", "dnb-picks");
  const pickCount = h("span", "dnb-muted", "");
  const compareBtn = button("dnb-action dnb-compare-go", "Compare", () => {
    const before = model.get("comparison");
    if (!ctx.kernel.request("compare", () => model.get("comparison") !== before || !!model.get("error"))) return;
    model.send({ action: "compare", ids: ctx.picks });
  });
  const unpickBtn = button("dnb-action dnb-compare-unpick", "Clear picks", () => ctx.clearPicks());
  compareBtn.title = "Compare the picked entries side by side (pick them in an entry's details)";
  pickBar.append(pickCount, compareBtn, unpickBtn);
  tools.append(find, filter, pickBar);

  const costLine = h("div", "dnb-costline"); // tokens and cost: the views' path and the whole session (Python's sums)
  costLine.hidden = true;
  const error = h("div", "dnb-error");

  // -- find ---------------------------------------------------------------------------
  /** Ask Python for the hits of the query in the box (again, when the tree changed); `keep` keeps the current hit. */
  function sendSearch(keep = false): void {
    const q = findInput.value.trim();
    if (!q) {
      ctx.found = { query: "", asked: "", total: 0, hits: [], at: -1 };
      ctx.hitRows = new Set();
      drawFind();
      ctx.hooks.paintRows();
      return;
    }
    if (ctx.kernel.staleReason()) return;
    ctx.found.asked = q;
    if (!keep) ctx.found.at = -1;
    findCount.textContent = "searching…";
    model.send({ action: "search", query: q });
  }
  function onSearch(msg: SearchReply): void {
    const found = ctx.found;
    if (msg.query !== found.asked) return; // an answer to an older query
    const current = found.at >= 0 && found.hits[found.at] ? found.hits[found.at].id : "";
    const again = msg.query === found.query;
    ctx.found = { query: msg.query, asked: msg.query, total: msg.total, hits: msg.hits || [], at: -1 };
    ctx.hitRows = new Set(ctx.found.hits.map((x) => x.drawn || x.id));
    const keepAt = again && current ? ctx.found.hits.findIndex((x) => x.id === current) : -1;
    if (keepAt >= 0) {
      ctx.found.at = keepAt;
      drawFind();
      ctx.hooks.paintRows();
    } else go(0);
  }
  const onCustom = (msg: unknown) => {
    const r = asReply(msg);
    if (r?.reply === "search") onSearch(r);
  };
  /** Reveal hit number k (wrapping): scroll its row into view, select it, say where it is. */
  function go(k: number): void {
    const found = ctx.found;
    const n = found.hits.length;
    if (!n) {
      found.at = -1;
      drawFind();
      ctx.hooks.paintRows();
      return;
    }
    found.at = ((k % n) + n) % n;
    const hit = found.hits[found.at];
    if (model.get("view") !== "tree") ctx.setView("tree");
    if (hit.index >= 0) ctx.hooks.scrollTo(hit.index);
    else ctx.hooks.reveal(hit.drawn || hit.id);
    ctx.select(hit.id);
    drawFind();
  }
  function drawFind(): void {
    const found = ctx.found;
    if (!found.query) findCount.textContent = "";
    else if (!found.total) findCount.textContent = "no match";
    else {
      const more = found.total > found.hits.length ? ` (first ${found.hits.length} listed)` : "";
      findCount.textContent = `${found.at + 1} of ${found.total}${more}`;
    }
    findPrev.disabled = findNext.disabled = found.hits.length < 2;
  }
  let findTimer: ReturnType<typeof setTimeout> | undefined;
  findInput.addEventListener("input", () => {
    clearTimeout(findTimer);
    findTimer = setTimeout(() => sendSearch(), 300);
  });
  findInput.addEventListener("keydown", (ev) => {
    if (ev.key !== "Enter") return;
    ev.preventDefault();
    clearTimeout(findTimer);
    if (findInput.value.trim() !== ctx.found.query) sendSearch();
    else go(ctx.found.at + (ev.shiftKey ? -1 : 1));
  });

  // -- the kind filter: Python lays the tree out again without those entries --------------
  function sendFilter(): void {
    const hide = [...filterBoxes].filter(([, box]) => box.checked).map(([g]) => g);
    const asked = () => JSON.stringify(model.get("hidden") || []) === JSON.stringify(hide) || !!model.get("error");
    if (!ctx.kernel.request("filter", asked)) return;
    model.send({ action: "filter", hide });
  }

  function drawPicks(): void {
    pickCount.textContent = ctx.picks.length ? `${ctx.picks.length} picked` : "";
    compareBtn.disabled = ctx.picks.length < 2;
    unpickBtn.hidden = !ctx.picks.length;
  }

  function drawStatus(): void {
    const sel = ctx.selected();
    const ro = model.get("read_only") || "";
    const stale = ctx.kernel.stale;
    status.textContent = `${ro ? `read-only copy of ${ro} · ` : ""}${model.get("session_id") || ""} · ${ctx.tree.entries} entries · leaf ${short(ctx.leaf())}${sel ? ` · selected ${short(sel)}` : ""}`;
    status.classList.toggle("dnb-read-only", !!ro);
    follow.hidden = !sel;
    const whole = model.get("session_cost") || "";
    const here = ctx.views().cost || "no replies";
    costLine.textContent = whole ? `tokens and cost · this branch${sel ? " up to the selected entry" : ""}: ${here} · whole session: ${whole}` : "";
    costLine.hidden = !whole;
    const err = stale || model.get("error") || "";
    error.textContent = err;
    error.hidden = !err;
    error.classList.toggle("dnb-stale", !!stale);
    if (stale) ctx.notice.hidden = true;
  }

  function showView(): void {
    const view = model.get("view") || "tree";
    for (const [name, b] of tabButtons) {
      b.classList.toggle("dnb-on", name === view);
      b.setAttribute("aria-pressed", String(name === view));
    }
    for (const p of panels) {
      p.el.hidden = view !== p.name;
      (tabButtons.get(p.name) as HTMLButtonElement).hidden = !!p.tabHidden?.();
    }
    panels.find((p) => p.name === view)?.shown?.();
  }

  model.on("msg:custom", onCustom);
  Object.assign(ctx.hooks, { drawStatus, drawPicks, drawFind, showView, searchAgain: () => sendSearch(true) });
  return {
    els: [bar, tools, costLine, error, ctx.notice],
    showView,
    draw() {
      const hidden = model.get("hidden") || [];
      for (const [g, box] of filterBoxes) box.checked = hidden.includes(g);
      drawPicks();
      drawFind();
    },
    dispose() {
      model.off("msg:custom", onCustom);
      clearTimeout(findTimer);
    },
  };
}
