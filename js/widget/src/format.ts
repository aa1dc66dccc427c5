/** Pure text helpers: ids, durations, tokens and cost, settings. No DOM. */
import type { Row } from "./protocol";

/** An entry id as the page shows it: its first 8 characters, "—" for none. */
export const short = (id: string | null | undefined): string => (id ? id.slice(0, 8) : "—");

/**
 * A reply's tokens and cost for a badge or the details: "1,234 in / 56 out · $0.00022" (Python priced it:
 * durable_nb.cost), "cost unknown" when the price table does not know the model; "" without usage.
 */
export function costText(r: Row | undefined): string {
  if (!r || !r.tokens) return "";
  const n = (x: number) => x.toLocaleString("en-US");
  return `${n(r.tokens[0])} in / ${n(r.tokens[1])} out${r.cost ? " · " + r.cost : ""}`;
}

/** A duration for a badge: "12 ms", "3.4 s", "12 s"; "" for anything but a finite number. */
export function duration(ms: unknown): string {
  if (typeof ms !== "number" || !isFinite(ms)) return "";
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(ms < 10000 ? 1 : 0)} s`;
}

/** A value of a setting for a diff: "(not set)" for none, else its JSON. */
export const settingValue = (v: unknown): string => (v === null || v === undefined ? "(not set)" : JSON.stringify(v));

/** "1 message" / "3 messages". */
export const plural = (n: number, what: string): string => `${n} ${what}${n === 1 ? "" : "s"}`;

/** `text` on one line, cut to `max` characters with "…". */
export function oneLine(text: string, max: number): string {
  const t = text.replace(/\s+/g, " ").trim();
  return t.length > max ? t.slice(0, max - 1) + "…" : t;
}
