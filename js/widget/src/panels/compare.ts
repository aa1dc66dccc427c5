/**
 * The compare panel: Python's `comparison` trait (share/comparison.py's state) drawn as the sides in
 * columns (name, labels, model, settings, tokens and cost, time, system prompt, the request's messages
 * a diff names plus its last few, the reply), then each diff as a list. Text only (textContent).
 */
import { injectionBadge } from "../badges";
import type { Ctx } from "../context";
import { button, h } from "../dom";
import { duration, oneLine, plural, settingValue, short } from "../format";
import type { Diff, CompareMessage, CompareSide, Comparison } from "../protocol";
import { collapsible, isLong, isProse, textBody } from "../reading";
import type { Panel } from "./panel";

const MAX_CHANGES = 40; // changes of one diff listed (a line says how many more)

/** The name a compare side goes by: its short id when given by id (or prefix), else `label (short id)`. */
export function sideName(s: Pick<CompareSide, "entry_id" | "ref">): string {
  return s.entry_id.startsWith(s.ref) ? short(s.entry_id) : `${s.ref} (${short(s.entry_id)})`;
}

/** One message of a compare side, marked with how a diff changed it (`op`: added, removed, changed). */
function compareMessage(m: CompareMessage, op?: string): HTMLElement {
  const card = h("div", `dnb-card dnb-card-${m.role}${m.injected ? " dnb-card-" + m.injected : ""}${op ? " dnb-diff-" + op : ""}`);
  const head = h("div", "dnb-card-head");
  head.append(h("span", "dnb-index", `#${(m.i ?? 0) + 1}`), h("span", "dnb-label", m.role));
  const inj = injectionBadge(m);
  if (inj) head.append(inj);
  if (op) head.append(h("span", `dnb-badge dnb-diff-badge dnb-diff-${op}`, op));
  card.append(head, textBody(m.text, isProse(m.role)));
  return card;
}

function sideColumn(s: CompareSide, i: number, ops: Map<string, string>): HTMLElement {
  const col = h("div", "dnb-compare-side");
  col.dataset.side = String(i);
  const title = h("div", "dnb-compare-title");
  title.append(h("strong", "", sideName(s)));
  for (const name of s.labels || []) if (name !== s.ref) title.append(h("span", "dnb-badge dnb-labelmark", name)); // other names
  if (i === 0) title.append(h("span", "dnb-badge", "base"));
  col.append(title);
  const table = h("dl", "dnb-kv");
  const kv = (k: string, v: unknown) => table.append(h("dt", "", k), h("dd", "", v));
  kv("model", s.model || "(no reply)");
  kv("settings", Object.entries(s.settings || {}).map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(", ") || "provider defaults");
  kv("reply", s.cost ? s.cost.summary : "no reply");
  kv("branch", s.branch_cost.summary);
  kv("time", duration(s.total_ms) || "not recorded");
  kv("request", plural(s.message_total, "message"));
  col.append(table);
  const sys = h("details", "dnb-compare-system");
  sys.append(h("summary", "", s.system === null || s.system === undefined ? "system prompt: none" : `system prompt · ${s.system.length} chars`));
  if (s.system) sys.append(h("div", "dnb-text", s.system));
  col.append(sys);
  let prev = -1;
  for (const m of s.messages) {
    const at = m.i ?? prev + 1;
    const gap = at - prev - 1;
    if (gap > 0) col.append(h("div", "dnb-muted dnb-compare-gap", `… ${plural(gap, "message")} not shown (#${prev + 2}–#${at}; the entry's model view has them)`));
    col.append(compareMessage(m, ops.get(String(at))));
    prev = at;
  }
  col.append(h("div", "dnb-compare-reply-head", "reply"));
  if (s.reply) {
    const card = h("div", "dnb-card dnb-card-assistant dnb-compare-reply");
    card.append(collapsible(textBody(s.reply.text, true), isLong(s.reply.text)));
    col.append(card);
  } else col.append(h("div", "dnb-muted", "(none: this entry has no reply)"));
  return col;
}

function diffBox(d: Diff, a: CompareSide, b: CompareSide): HTMLElement {
  const box = h("div", "dnb-compare-diff");
  const counts = (["changed", "added", "removed"] as const)
    .map((op) => [op, d.messages.filter((ch) => ch.op === op).length] as const)
    .filter(([, n]) => n);
  const what = counts.map(([op, n]) => `${n} ${op}`).join(", ");
  box.append(h("div", "dnb-compare-diff-head", `${sideName(b)} against ${sideName(a)}: ${d.same} message${d.same === 1 ? "" : "s"} the same${what ? ", " + what : ""}`));
  const list = h("ul", "dnb-compare-diff-list");
  const li = (cls: string, text: string) => list.append(h("li", cls, text));
  if (d.model) li("dnb-diff-model", `model: ${d.model[0] || "(none)"} → ${d.model[1] || "(none)"}`);
  for (const [k, [va, vb]] of Object.entries(d.settings || {})) li("dnb-diff-setting", `setting ${k}: ${settingValue(va)} → ${settingValue(vb)}`);
  if (d.system) {
    const side = (x: string | null) => (x === null ? "(none)" : JSON.stringify(x));
    li("dnb-diff-system", `system prompt: ${side(d.system[0])} → ${side(d.system[1])}`);
  }
  const byA = new Map(a.messages.map((m) => [m.i, m]));
  const byB = new Map(b.messages.map((m) => [m.i, m]));
  const one = (m: CompareMessage | undefined) =>
    m ? `${m.role}${m.injected ? " [" + m.injected + "]" : ""}: ${oneLine(m.text, 80)}` : "(not shown here: see that entry's model view)";
  for (const ch of d.messages.slice(0, MAX_CHANGES)) {
    const ia = ch.a ?? -1;
    const ib = ch.b ?? -1;
    if (ch.op === "changed") li("dnb-diff-changed", `~ #${ia + 1} ${one(byA.get(ia))}  →  #${ib + 1} ${one(byB.get(ib))}`);
    else if (ch.op === "added") li("dnb-diff-added", `+ #${ib + 1} ${one(byB.get(ib))}`);
    else li("dnb-diff-removed", `− #${ia + 1} ${one(byA.get(ia))}`);
  }
  if (d.messages.length > MAX_CHANGES) li("dnb-muted", `… and ${d.messages.length - MAX_CHANGES} more changes`);
  if (!list.childElementCount) li("dnb-muted", "the requests are the same");
  box.append(list);
  return box;
}

/** Draw comparison `c` into `panel`; `onClear` is its "Clear comparison" button. */
export function drawCompare(panel: HTMLElement, c: Comparison | Record<string, never> | undefined, onClear: () => void): void {
  panel.replaceChildren();
  const sides = (c && c.sides) || [];
  const head = h("div", "dnb-view-head");
  if (!sides.length) {
    head.textContent = "Compare: pick two or more entries in the tree (“Pick for compare” in an entry's details), then “Compare”.";
    panel.append(head);
    return;
  }
  head.textContent = `Compare ${sides.length} entries: each request against the first's, and the replies side by side.`;
  head.append(" ", button("dnb-action dnb-compare-clear", "Clear comparison", onClear));
  panel.append(head);
  // what each side's messages went through, from every diff (the first side: removed / changed)
  const ops: Map<string, string>[] = sides.map(() => new Map());
  for (const d of c?.diffs || []) {
    for (const ch of d.messages) {
      if (ch.a !== null && ch.a !== undefined) ops[d.a].set(String(ch.a), ch.op);
      if (ch.b !== null && ch.b !== undefined) ops[d.b].set(String(ch.b), ch.op);
    }
  }
  const grid = h("div", "dnb-compare-grid");
  // side by side while they fit; a side that does not wraps to the next row (never clipped)
  grid.style.gridTemplateColumns = `repeat(auto-fit, minmax(${sides.length > 2 ? 190 : 220}px, 1fr))`;
  sides.forEach((s, i) => grid.append(sideColumn(s, i, ops[i])));
  panel.append(grid);
  for (const d of c?.diffs || []) panel.append(diffBox(d, sides[d.a], sides[d.b]));
}

export function comparePanel(ctx: Ctx): Panel {
  const el = h("div", "dnb-panel dnb-compare-panel");
  let seen: unknown = null;
  const clear = () => {
    const before = ctx.model.get("comparison");
    if (!ctx.kernel.request("clear the comparison", () => ctx.model.get("comparison") !== before)) return;
    ctx.model.send({ action: "compare", ids: [] });
  };
  return {
    name: "compare",
    tab: "Compare",
    el,
    draw() {
      const comparison = ctx.model.get("comparison");
      if (comparison !== seen) drawCompare(el, comparison, clear);
      seen = comparison;
    },
    tabHidden: () => ctx.model.get("view") !== "compare" && !Object.keys(ctx.model.get("comparison") || {}).length,
  };
}
