/**
 * The model view and the transcript view at the selected entry, both drawn from Python's `views`
 * (its last `view_limit` items; "Show earlier" asks for four times more). Redrawn only when Python
 * sent new views or the hidden kinds changed. O(items shown).
 */
import { injectionBadge, originLabel, resultBadge } from "../badges";
import { drawBlocks } from "../blocks";
import type { Ctx } from "../context";
import { button, h } from "../dom";
import { short } from "../format";
import type { ViewMessage, ViewEntry, Views } from "../protocol";
import { collapsible, isLong, isProse, roleHead, textBody } from "../reading";
import type { Panel } from "./panel";

/** The "k earlier not shown" note with a button that asks Python for more. */
function more(ctx: Ctx, panel: HTMLElement, shown: number, total: number): void {
  if (shown >= total) return;
  const note = h("div", "dnb-more");
  note.append(h("span", "dnb-muted", `${total - shown} earlier not shown · `));
  note.append(
    button("dnb-action", "Show earlier", () => {
      const before = ctx.views();
      if (!ctx.kernel.request("earlier messages", () => ctx.views() !== before)) return;
      ctx.model.set("view_limit", (ctx.model.get("view_limit") || 200) * 4);
      ctx.model.save_changes();
    }),
  );
  panel.append(note);
}

const where = (v: Partial<Views>) => (v.at ? `${short(v.at)}${v.following_leaf ? " (leaf)" : ""}` : "(empty)");

/** Redraw `draw(v)` only when `views` or `hidden` changed since the last time. */
function whenChanged(ctx: Ctx, draw: (v: Partial<Views>) => void): () => void {
  let seenViews: unknown = null;
  let seenHidden: unknown = null;
  return () => {
    const views = ctx.views();
    const hidden = ctx.model.get("hidden") || [];
    if (views !== seenViews || hidden !== seenHidden) draw(ctx.views());
    seenViews = views;
    seenHidden = hidden;
  };
}

function modelCard(ctx: Ctx, m: ViewMessage, n: number): HTMLElement {
  const card = h("div", `dnb-card dnb-card-${m.role}`);
  if (m.injected) card.classList.add(`dnb-card-${m.injected}`);
  // a role block: the role (injected context says so: the model reads it, a person never wrote it here)
  const head = roleHead(m.injected ? `${m.role} · ${m.injected} context` : m.role);
  head.prepend(h("span", "dnb-index", `${n}`));
  const inj = injectionBadge(m);
  if (inj) head.append(inj);
  if (!m.entry_id) head.append(h("span", "dnb-badge dnb-synth", m.origin && m.origin.startsWith("compaction:") ? "compaction summary" : "synthesized"));
  else if (!m.injected && m.origin) head.append(h("span", "dnb-badge", originLabel(m.origin)));
  const res = resultBadge(m, `result for ${m.tool_call_id}`);
  if (res) head.append(res);
  if (m.entry_id) head.append(h("span", "dnb-id", short(m.entry_id)));
  card.append(head);
  if (m.role === "tool_result" && (ctx.model.get("hidden") || []).includes("tool_result")) {
    const fold = h("details", "dnb-fold");
    fold.append(h("summary", "", "result (collapsed: tool results are hidden)"), drawBlocks(m.content, true));
    card.append(fold);
  } else card.append(drawBlocks(m.content, true, isProse(m.role)));
  return card;
}

// a widget's first state carries only the shown tab's part of `views` (views_delta.opening): the others come when shown
const LOADING = "Loading this view from the kernel…";

export function modelPanel(ctx: Ctx): Panel {
  const el = h("div", "dnb-panel dnb-model-panel");
  const draw = (v: Partial<Views>) => {
    el.replaceChildren();
    if (v.model === undefined) return el.append(h("div", "dnb-muted", LOADING)); // a first state: asked for
    const items = v.model || [];
    const total = v.model_total || 0;
    el.append(
      h("div", "dnb-view-head", `Model view at ${where(v)}: the ${v.model_total ?? 0} messages the model receives (compaction applied, dangling tool calls repaired, injected context marked).`),
    );
    more(ctx, el, items.length, total);
    const start = total - items.length;
    items.forEach((m, i) => el.append(modelCard(ctx, m, start + i + 1)));
  };
  return { name: "model", tab: "Model view", el, draw: whenChanged(ctx, draw) };
}

function transcriptCard(t: ViewEntry): HTMLElement {
  const card = h("div", `dnb-card dnb-card-${t.role || t.type}`);
  if (t.kind === "note") card.classList.add("dnb-card-note");
  const head = roleHead(t.what || t.type);
  const res = resultBadge(t, `result of ${t.tool_name || "tool"}`);
  if (res) head.append(res);
  head.append(h("span", "dnb-id", short(t.id)));
  card.append(head);
  const thinking = (t.blocks || []).filter((b) => b.type === "thinking");
  const calls = (t.blocks || []).filter((b) => b.type === "tool_call");
  if (thinking.length) card.append(drawBlocks(thinking, false));
  if (t.type === "custom") {
    // A kind that says how it reads (a note's body, a pi record's point) shows that; its record folded.
    if (t.readable) card.append(collapsible(textBody(t.text, t.kind === "note"), isLong(t.text)));
    if (t.data && t.readable) {
      const fold = h("details", "dnb-fold");
      fold.append(h("summary", "", "record"), h("pre", "dnb-pre", t.data));
      card.append(fold);
    } else if (t.data) card.append(h("pre", "dnb-pre", t.data));
  } else if (t.text) {
    const text = t.type === "compaction" ? `Summary: ${t.text}` : t.text;
    card.append(collapsible(textBody(text, isProse(t.role) || t.type === "compaction"), isLong(text)));
  }
  else if (!calls.length) card.append(h("div", "dnb-muted", "(no text)"));
  if (calls.length) card.append(drawBlocks(calls, false));
  return card;
}

export function transcriptPanel(ctx: Ctx): Panel {
  const el = h("div", "dnb-panel dnb-transcript-panel");
  const draw = (v: Partial<Views>) => {
    el.replaceChildren();
    if (v.transcript === undefined) return el.append(h("div", "dnb-muted", LOADING)); // a first state: asked for
    const items = v.transcript || [];
    el.append(h("div", "dnb-view-head", `Transcript view at ${where(v)}: what a person reads (injected context and reminder blocks hidden; custom entries kept).`));
    more(ctx, el, items.length, v.transcript_total || 0);
    for (const t of items) el.append(transcriptCard(t));
    if (!items.length) el.append(h("div", "dnb-muted", "Nothing for a reader here."));
  };
  return { name: "transcript", tab: "Transcript view", el, draw: whenChanged(ctx, draw) };
}
