/**
 * Chips: what bookkeeping entries say about an entry, drawn on its row and in its details — its label
 * names (the `labels` trait), the latest verdict of each grader and annotation of each author (the
 * line's `chips`, Python's durable_nb.widget.chips). A bookkeeping entry is never a row of its own.
 */
import { h } from "./dom";
import { oneLine } from "./format";
import type { Chip } from "./protocol";

/** A chip as one line: "pass · exact", "fail · judge · 0.2", "★ 0.5 #wrong-tool · ana ×2" (as fallback.chip_text). */
export function chipText(c: Chip): string {
  const more = c.count > 1 ? ` ×${c.count}` : "";
  if (c.kind === "verdict") {
    const score = typeof c.score === "number" ? ` · ${+c.score.toPrecision(6)}` : "";
    return `${c.error ? "error" : c.passed ? "pass" : "fail"} · ${c.grader || "grader"}${score}${more}`;
  }
  const parts = typeof c.score === "number" ? [`★ ${+c.score.toPrecision(6)}`] : [];
  for (const t of c.tags || []) parts.push(`#${t}`);
  return `${parts.join(" ") || "note"}${c.by ? " · " + c.by : ""}${more}`;
}

/** What a chip's tooltip says: the note or reason in full, who and when, how many were written. */
export function chipTitle(c: Chip): string {
  const what = c.kind === "verdict" ? `verdict of ${c.grader || "a grader"}${c.run ? ` in run ${c.run}` : ""}` : `annotation by ${c.by || "someone"}`;
  const body = c.error || c.reason || c.note || "";
  const kept = c.count > 1 ? ` · the latest of ${c.count} (all kept in the log)` : "";
  return `${what}${c.at ? " · " + c.at : ""}${kept}${body ? "\n" + body : ""}`;
}

/** The chip elements of an entry: its label names, then its verdicts and annotations. */
export function chipEls(names: string[], chips: Chip[] | undefined): HTMLElement[] {
  const out: HTMLElement[] = names.map((name) => {
    const b = h("span", "dnb-badge dnb-name dnb-chip-label", name);
    b.title = `label ${name}`;
    return b;
  });
  for (const c of chips || []) {
    const cls = c.kind === "verdict" ? `dnb-chip-verdict ${c.error ? "dnb-chip-error" : c.passed ? "dnb-chip-pass" : "dnb-chip-fail"}` : "dnb-chip-note";
    const b = h("span", `dnb-badge dnb-chip ${cls}`, chipText(c));
    b.title = chipTitle(c);
    b.dataset.chip = c.id;
    out.push(b);
  }
  return out;
}

/** The chips of an entry as details lines: "annotation · ana · 2026-… : the note". */
export function chipLines(chips: Chip[] | undefined): HTMLElement | null {
  if (!chips || !chips.length) return null;
  const ul = h("ul", "dnb-chip-list");
  for (const c of chips) {
    const li = h("li", "");
    li.append(chipEls([], [c])[0]);
    const body = c.error || c.reason || c.note || "";
    if (body) li.append(document.createTextNode(" " + oneLine(body, 300)));
    ul.append(li);
  }
  return ul;
}
