/**
 * The evaluation grid: Python's `evaluation` trait (durable_nb/evals/grid.py's state) drawn as cases in
 * rows × variants in columns. Each cell: pass / FAIL / ERROR (and the mean score when graders gave
 * scores), its cost and time, its verdicts in the tooltip, its mark against the baseline. Filters:
 * failures only, differs from the baseline. A click on a cell opens that pair's reply: the tree tab,
 * revealed and selected, so the model and transcript views are at it. Text only (textContent).
 */
import type { Ctx } from "../context";
import { h } from "../dom";
import { duration, plural } from "../format";
import type { EvalGrid, GridCell } from "../protocol";
import type { Panel } from "./panel";

/** A cell's outcome in words: "pass", "FAIL" (the failing graders), "ERROR"; the mean score beside it. */
export function outcome(c: GridCell): string {
  if (c.error) return "ERROR";
  const bad = c.verdicts.filter((v) => !v.passed).map((v) => v.grader);
  const word = c.passed ? "pass" : `FAIL${bad.length ? " " + bad.join(",") : ""}`;
  return c.score !== undefined ? `${word} · score ${c.score}` : word;
}

/** A cell's tooltip: each verdict on a line (grader: pass/fail (reason)), or the error; then the reply's start. */
export function cellTitle(c: GridCell): string {
  const lines = c.error
    ? [c.error]
    : c.verdicts.map((v) => `${v.grader}: ${v.passed ? "pass" : "fail"}${v.error || v.reason ? ` (${v.error || v.reason})` : ""}`);
  if (c.reply) lines.push("", `reply: ${c.reply.slice(0, 200)}`);
  return lines.join("\n");
}

export interface GridFilters {
  failures: boolean;
  differs: boolean;
}

/** Whether a cell matches the filters (failures: did not pass; differs: marked against the baseline). */
export const matches = (c: GridCell, f: GridFilters): boolean => (!f.failures || !c.passed) && (!f.differs || !!c.baseline);

function cellEl(c: GridCell | undefined, f: GridFilters, open: (c: GridCell) => void): HTMLElement {
  const td = h("td", "dnb-grid-cell");
  if (!c) {
    td.textContent = "—";
    return td;
  }
  const kind = c.error ? "error" : c.passed ? "pass" : "fail";
  td.classList.add(`dnb-grid-${kind}`);
  if (!matches(c, f)) td.classList.add("dnb-grid-dim");
  td.dataset.case = String(c.case);
  td.dataset.variant = String(c.variant);
  td.title = cellTitle(c);
  const head = h("div", "dnb-grid-outcome", outcome(c));
  if (c.baseline) head.append(" ", h("span", `dnb-badge dnb-grid-mark dnb-grid-${c.baseline}`, c.baseline));
  const meta = [c.cost, duration(c.ms)].filter((x) => x).join(" · ");
  td.append(head, h("div", "dnb-grid-meta dnb-muted", meta || "cost and time not recorded"));
  if (c.entry_id) {
    td.classList.add("dnb-grid-open");
    td.tabIndex = 0;
    td.addEventListener("click", () => open(c));
    td.addEventListener("keydown", (ev) => {
      if (ev.key === "Enter" || ev.key === " ") {
        ev.preventDefault();
        open(c);
      }
    });
  }
  return td;
}

/** Draw grid `g` into `panel` with filters `f`; `open` opens a cell's reply; `refilter` redraws on a filter change. */
export function drawGrid(panel: HTMLElement, g: EvalGrid | Record<string, never> | undefined, f: GridFilters, open: (c: GridCell) => void, refilter: () => void): void {
  panel.replaceChildren();
  const head = h("div", "dnb-view-head");
  if (!g || !g.run) {
    head.textContent = "Evaluation: %durable evals RUN shows a run's grid here (cases × variants).";
    panel.append(head);
    return;
  }
  head.append(h("strong", "", `Evaluation ${g.run}`), ` · ${g.summary}${g.finished ? "" : " · unfinished"}`);
  const bar = h("div", "dnb-grid-filters");
  const box = (key: keyof GridFilters, label: string, disabled: boolean, title: string) => {
    const lab = h("label", `dnb-grid-filter-${key}`);
    const input = h("input");
    input.type = "checkbox";
    input.checked = f[key];
    input.disabled = disabled;
    input.addEventListener("change", () => {
      f[key] = input.checked;
      refilter();
    });
    lab.title = title;
    lab.append(input, document.createTextNode(label));
    bar.append(lab);
  };
  box("failures", "failures", false, "only the cases with a pair that did not pass");
  box("differs", "differs from baseline", !g.baseline, g.baseline ? `only the pairs that regressed, improved or changed reply against ${g.baseline}` : "no baseline: %durable evals RUN --baseline B");
  panel.append(head, bar);

  const by = new Map<string, GridCell>();
  for (const c of g.cells) by.set(`${c.case}:${c.variant}`, c);
  const table = h("table", "dnb-grid");
  const hr = h("tr");
  hr.append(h("th", "dnb-grid-case", "case"));
  for (const v of g.variants) hr.append(h("th", "dnb-grid-variant", v));
  table.append(hr);
  let shown = 0;
  for (const c of g.cases) {
    const cells = g.variants.map((_, i) => by.get(`${c.index}:${i}`));
    if ((f.failures || f.differs) && !cells.some((x) => x && matches(x, f))) continue;
    shown++;
    const tr = h("tr");
    tr.dataset.case = String(c.index);
    const th = h("th", "dnb-grid-case");
    th.append(h("span", "dnb-index", `#${c.index}`), " ", h("span", "dnb-grid-label", c.label));
    tr.append(th, ...cells.map((x) => cellEl(x, f, open)));
    table.append(tr);
  }
  panel.append(table);
  const hidden = g.cases.length - shown;
  if (hidden) panel.append(h("div", "dnb-muted", `${plural(hidden, "case")} hidden by the filters`));
  if (g.case_total > g.cases.length) panel.append(h("div", "dnb-muted", `… ${g.case_total - g.cases.length} more cases not shown (EvalRun.frame() has every pair)`));
}

export function gridPanel(ctx: Ctx): Panel {
  const el = h("div", "dnb-panel dnb-grid-panel");
  const filters: GridFilters = { failures: false, differs: false };
  let seen: unknown = null;
  const open = (c: GridCell) => {
    ctx.select(c.entry_id);
    ctx.setView("tree");
    ctx.hooks.reveal(c.entry_id);
  };
  const draw = () => drawGrid(el, ctx.model.get("evaluation"), filters, open, draw);
  return {
    name: "grid",
    tab: "Evaluation",
    el,
    draw() {
      const g = ctx.model.get("evaluation");
      if (g !== seen) draw();
      seen = g;
    },
    tabHidden: () => ctx.model.get("view") !== "grid" && !Object.keys(ctx.model.get("evaluation") || {}).length,
  };
}
