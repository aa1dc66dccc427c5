/** Badges shared by the panels: a tool result's, an injection's, and a cell origin's label. */
import { h } from "./dom";
import { duration } from "./format";
import type { Timing } from "./protocol";

/** The badge of a tool result: "result · error · 12 ms" (error colour when it failed), or null. */
export function resultBadge(
  m: { tool_call_id?: string | null; is_error?: boolean; duration_ms?: number; timing?: Timing | null },
  prefix = "result",
): HTMLElement | null {
  if (!m.tool_call_id) return null;
  const ms = duration(m.duration_ms ?? (m.timing || {}).duration_ms);
  return h("span", `dnb-badge ${m.is_error ? "dnb-failed" : "dnb-tool"}`, `${prefix}${m.is_error ? " · error" : ""}${ms ? " · " + ms : ""}`);
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * An origin as a reader knows it, the rule of Python's `ai.shown_origin`: as recorded (`cell:skill`),
 * but a cell named by a generated UUID (JupyterLab's ids) is just `cell`: the message's text beside it
 * is the cell's own text. Never an execution count (a restart renumbers them, so `cell [2]` would name
 * another cell) nor the cell's text now (it may have been edited since). Text only (textContent).
 */
export function originLabel(origin: string): string {
  const i = origin.indexOf(":");
  return i > 0 && UUID.test(origin.slice(i + 1)) ? origin.slice(0, i) : origin;
}

/** One badge per injection / synthesized marker, or null. */
export function injectionBadge(m: { injected?: string | null; origin?: string | null }): HTMLElement | null {
  if (!m.injected) return null;
  const b = h("span", `dnb-badge dnb-${m.injected}`, m.origin ? `${m.injected} · ${originLabel(m.origin)}` : m.injected);
  if (m.origin) b.title = m.origin;
  return b;
}
