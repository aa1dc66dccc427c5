/** The details of the entry the views are at (Python's full entry), with its actions. Part of the tree panel. */
import { injectionBadge, originLabel } from "../badges";
import { drawBlocks } from "../blocks";
import { chipLines } from "../chips";
import { copyLink } from "../links";
import type { Ctx } from "../context";
import { button, h } from "../dom";
import { duration, short } from "../format";
import { mcpLines, reusedLine } from "../mcp";
import type { Message } from "../protocol";

/** A key/value line of a details table (nothing for an empty value). */
function kv(table: HTMLElement, key: string, value: unknown): void {
  if (value === undefined || value === null || value === "") return;
  table.append(h("dt", "", key), h("dd", "", value));
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
    const table = h("dl", "dnb-kv");
    kv(table, "id", e.id);
    kv(table, "labels", ctx.namesOf(e.id).join(", "));
    kv(table, "parent", e.parent_id || "(root)");
    kv(table, "time", e.created_at);
    kv(table, "role", msg.role);
    kv(table, "injection", msg.injected || (e.type === "message" ? "none" : ""));
    kv(table, "origin", msg.origin && originLabel(msg.origin) !== msg.origin ? `${originLabel(msg.origin)} (${msg.origin})` : msg.origin);
    kv(table, "tool call id", msg.tool_call_id);
    kv(table, "tool", msg.tool_name);
    for (const line of mcpLines(msg)) kv(table, "MCP server", line);
    kv(table, "reused", reusedLine(msg));
    if (msg.role === "tool_result") kv(table, "error", msg.is_error ? "yes (the model was told the call failed)" : "no");
    kv(table, "model", msg.model);
    if (msg.usage) kv(table, "usage", JSON.stringify(msg.usage));
    const line = ctx.cache.lineOf(e.id);
    if (msg.role === "assistant") kv(table, "cost", line?.row.cost || "");
    kv(table, "stop reason", msg.stop_reason);
    if (msg.settings) kv(table, "settings", JSON.stringify(msg.settings));
    const timing = msg.timing || {};
    kv(table, "duration", duration(timing.duration_ms));
    kv(table, "first token", duration(timing.ttft_ms));
    kv(table, "total time", duration(timing.total_ms));
    kv(table, "first kept", e.type === "compaction" ? e.first_kept_id || "(none: only what follows)" : "");
    kv(table, "tokens before", e.tokens_before);
    const r = line?.row;
    if (r && r.elides) kv(table, "elides", `${r.elides[2]} entries, ${r.elides[0]} … ${r.elides[1]}`);
    const on = line ? line.on : e.id === leaf;
    kv(table, "on active path", on ? "yes" : eph ? "no (ephemeral: off the chain)" : "no");
    if (line && ctx.unanswered(line, leaf)) {
      kv(table, "reply", "none: its turn failed or was stopped; the next turn continues from before it (re-run its cell to retry)");
    }
    el.append(table);
    const chips = chipLines(line?.chips);
    if (chips) el.append(chips);
    if (e.type === "message") el.append(drawBlocks(msg.content, true));
    else if (e.type === "compaction") el.append(h("div", "dnb-text", e.summary));
    else if (e.data) el.append(h("pre", "dnb-pre", JSON.stringify(e.data, null, 2)));

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
