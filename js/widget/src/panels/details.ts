/** The details of the entry the views are at (Python's full entry), with its actions. Part of the tree panel. */
import { injectionBadge, originLabel } from "../badges";
import { drawBlocks } from "../blocks";
import { chipLines } from "../chips";
import { copyLink } from "../links";
import type { Ctx } from "../context";
import { button, h } from "../dom";
import { duration, short } from "../format";
import { mcpLines, reusedLine } from "../mcp";
import { collapsible, isLong } from "../reading";
import type { Message } from "../protocol";

/** A key/value line of a details table (nothing for an empty value). */
function kv(table: HTMLElement, key: string, value: unknown): void {
  if (value === undefined || value === null || value === "") return;
  table.append(h("dt", "", key), h("dd", "", value));
}

/** A titled group of facts (a `dl`); `facts` draws the non-empty ones side by side. */
function group(title: string): HTMLElement {
  const table = h("dl", "dnb-kv");
  table.dataset.title = title;
  return table;
}

function facts(...groups: HTMLElement[]): HTMLElement {
  const grid = h("div", "dnb-facts");
  for (const g of groups) {
    if (!g.childElementCount) continue;
    const box = h("section", "dnb-facts-group");
    box.append(h("div", "dnb-facts-title", g.dataset.title), g);
    grid.append(box);
  }
  return grid;
}

/** A usage dict as a person reads it: "1,234 in · 56 out · 0 cache read" (numbers only; else its JSON). */
function usageText(u: Record<string, unknown>): string {
  const n = (k: string) => (typeof u[k] === "number" ? (u[k] as number).toLocaleString("en-US") : "");
  const parts = [
    n("input_tokens") && `${n("input_tokens")} in`,
    n("output_tokens") && `${n("output_tokens")} out`,
    n("cache_read_input_tokens") && `${n("cache_read_input_tokens")} cache read`,
    n("cache_creation_input_tokens") && `${n("cache_creation_input_tokens")} cache write`,
  ].filter(Boolean);
  return parts.length ? parts.join(" · ") : JSON.stringify(u);
}

export function detailsPart(ctx: Ctx): { el: HTMLElement; draw: () => void } {
  const { model } = ctx;
  const el = h("div", "dnb-details");

  function draw(): void {
    const v = ctx.views();
    const want = ctx.selected() || ctx.leaf();
    el.replaceChildren();
    if (!want) {
      el.append(h("div", "dnb-muted", "Empty session: no entries yet."));
      return;
    }
    const e = v.entry;
    if (!e || v.at !== want) {
      el.append(ctx.kernel.stale ? h("div", "dnb-stale", ctx.kernel.stale) : h("div", "dnb-muted", `Loading entry ${short(want)}…`));
      return;
    }
    const leaf = ctx.leaf();
    const msg: Partial<Message> = e.message || {};
    const eph = msg.injected === "ephemeral";
    const head = h("div", "dnb-details-head");
    head.append(h("strong", "", v.title || e.type));
    const inj = injectionBadge(msg);
    if (inj) head.append(inj);
    if (e.id === leaf) head.append(h("span", "dnb-badge dnb-leafmark", "leaf"));
    el.append(head);
    // The facts in groups (where the entry is, what the message is, the model call that made it),
    // after the content a person came for; the raw entry folded at the end.
    const table = group("Entry");
    const what = group(e.type === "message" ? "Message" : e.type === "compaction" ? "Compaction" : "Record");
    const call = group("Model call");
    kv(table, "id", e.id);
    kv(table, "labels", ctx.namesOf(e.id).join(", "));
    kv(table, "parent", e.parent_id || "(root)");
    kv(table, "time", e.created_at);
    kv(what, "role", msg.role);
    kv(what, "injection", msg.injected || (e.type === "message" ? "none" : ""));
    kv(what, "origin", msg.origin && originLabel(msg.origin) !== msg.origin ? `${originLabel(msg.origin)} (${msg.origin})` : msg.origin);
    kv(what, "tool call id", msg.tool_call_id);
    kv(what, "tool", msg.tool_name);
    for (const line of mcpLines(msg)) kv(what, "MCP server", line);
    kv(what, "reused", reusedLine(msg));
    if (msg.role === "tool_result") kv(what, "error", msg.is_error ? "yes (the model was told the call failed)" : "no");
    kv(what, "kind", e.kind);
    kv(call, "model", msg.model);
    if (msg.usage) kv(call, "usage", usageText(msg.usage));
    const line = ctx.cache.lineOf(e.id);
    if (msg.role === "assistant") kv(call, "cost", line?.row.cost || "");
    kv(call, "stop reason", msg.stop_reason);
    if (msg.settings) kv(call, "settings", JSON.stringify(msg.settings));
    const timing = msg.timing || {};
    kv(call, "duration", duration(timing.duration_ms));
    kv(call, "first token", duration(timing.ttft_ms));
    kv(call, "total time", duration(timing.total_ms));
    kv(what, "first kept", e.type === "compaction" ? e.first_kept_id || "(none: only what follows)" : "");
    kv(what, "tokens before", e.tokens_before);
    const r = line?.row;
    if (r && r.elides) kv(what, "elides", `${r.elides[2]} entries, ${r.elides[0]} … ${r.elides[1]}`);
    const on = line ? line.on : e.id === leaf;
    kv(table, "on active path", on ? "yes" : eph ? "no (ephemeral: off the chain)" : "no");
    if (line && ctx.unanswered(line, leaf)) {
      kv(table, "reply", "none: its turn failed or was stopped; the next turn continues from before it (re-run its cell to retry)");
    }
    const chips = chipLines(line?.chips);
    if (chips) el.append(chips);
    // the content, verbatim (the views draw it as Markdown): long text folded behind "Show more"
    const content = h("div", `dnb-details-content dnb-card dnb-card-${msg.role || e.type}`);
    if (e.type === "message") content.append(drawBlocks(msg.content, true));
    else if (e.type === "compaction") content.append(collapsible(h("div", "dnb-text", e.summary), isLong(e.summary || "")));
    else if (line?.row.preview) content.append(h("div", "dnb-text", line.row.preview));
    if (content.childElementCount) el.append(content);
    el.append(facts(table, what, call));
    if (e.type === "custom" && e.data) {
      const raw = h("details", "dnb-fold");
      raw.append(h("summary", "", "record (JSON)"), h("pre", "dnb-pre", JSON.stringify(e.data, null, 2)));
      raw.open = !line?.row.preview || line.row.preview.startsWith("{");
      el.append(raw);
    }

    const actions = h("div", "dnb-actions");
    const cont = button("dnb-action dnb-continue", "Continue from here", () => {
      const ok = ctx.kernel.request(`continue from ${short(e.id)}`, () => model.get("leaf_id") === e.id || !!model.get("error"));
      if (ok) model.send({ action: "branch", id: e.id });
    });
    cont.disabled = eph || e.id === leaf;
    cont.title = eph
      ? "An ephemeral entry is off the durable chain: you cannot branch to it."
      : e.id === leaf
        ? "This is already the leaf."
        : "Move the leaf here (branch): the next turn continues from this entry.";
    actions.append(
      cont,
      button("dnb-action", "Model view here", () => ctx.setView("model")),
      button("dnb-action", "Transcript here", () => ctx.setView("transcript")),
    );
    const pick = button("dnb-action dnb-pick", ctx.picks.includes(e.id) ? "Unpick" : "Pick for compare", () => ctx.togglePick(e.id));
    pick.title = "Pick two or more entries (replies, or the leaves of branches), then Compare in the bar above.";
    actions.append(pick, copyLink(e.id));
    el.append(actions);
  }

  return { el, draw };
}
