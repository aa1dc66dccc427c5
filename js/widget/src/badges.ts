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

/**
 * An origin as a reader knows it. `cell:<id>` names the cell when the page shows it (durable_nb's
 * JupyterLab / Notebook 7 extension marks each cell with `data-durable-cell-id`): its execution count
 * and first line after the `%%durable` line, e.g. `cell [3] "Answer in French."`; otherwise the
 * origin as recorded. Text only (textContent).
 */
export function originLabel(origin: string): string {
  if (!origin || !origin.startsWith("cell:") || typeof document === "undefined") return origin;
  const id = origin.slice(5);
  let cell: HTMLElement | null = null;
  try {
    cell = document.querySelector(`.jp-Cell[data-durable-cell-id="${CSS.escape(id)}"]`);
  } catch {
    return origin;
  }
  if (!cell) return origin;
  const prompt = (cell.querySelector(".jp-InputPrompt")?.textContent || "").replace(/[:\s]/g, "");
  const lines = Array.from(cell.querySelectorAll(".jp-InputArea-editor .cm-line"), (l) => l.textContent || "");
  const first = lines.find((l) => l.trim() && !l.trim().startsWith("%%")) || "";
  const text = first.length > 40 ? `${first.slice(0, 39)}…` : first;
  return `cell${prompt && prompt !== "[]" ? " " + prompt : ""}${text ? ` "${text.trim()}"` : ""}`;
}

/** One badge per injection / synthesized marker, or null. */
export function injectionBadge(m: { injected?: string | null; origin?: string | null }): HTMLElement | null {
  if (!m.injected) return null;
  const b = h("span", `dnb-badge dnb-${m.injected}`, m.origin ? `${m.injected} · ${originLabel(m.origin)}` : m.injected);
  if (m.origin) b.title = m.origin;
  return b;
}
