/**
 * The lanes and dot that start a tree row: sibling branches read as siblings at a glance.
 *
 * Python's layout gives each line its `rails` (durable_nb.widget.layout.Layout.rails: per level,
 * outermost first, whether a lane runs on past the line). Each level is one LANE_W-wide cell drawn by
 * CSS borders (so the lines meet whatever the font): `│` where a lane passes, and at the line's own
 * level `├` / `└` for a branch (dashed for an ephemeral entry, dotted for an aside). The dot that
 * follows is the entry; a branch point's dot grows a stem down to its branches. Rows on the active
 * path draw their own connector and dot in the accent colour: the branch you are on is marked.
 */
import { h } from "./dom";
import type { Line } from "./protocol";

export const LANE_W = 14; // px; equals .dnb-lane width in widget.css
export const MAX_LANES = 16; // cells drawn at most (Python sends the innermost 16)

/** The kind of one lane cell: what passes through it. */
export type Cell = "pass" | "none" | "tee" | "end";

/** Return the lane cells of a line, outermost first (at most MAX_LANES). O(levels). */
export function laneCells(line: Pick<Line, "rails" | "mark" | "depth">): Cell[] {
  const rails = (line.rails || []).slice(-MAX_LANES);
  const own = line.mark === "branch" || line.mark === "eph";
  return rails.map((on, i) => {
    const last = i === rails.length - 1;
    if (last && own) return on ? "tee" : "end";
    return on ? "pass" : "none";
  });
}

/** How the entry's own connector is drawn: solid, dashed (ephemeral, as the legend's swatch), dotted (aside). */
function style(line: Line): string {
  if (line.row.injected === "ephemeral") return "dnb-lane-eph";
  if (line.row.aside) return "dnb-lane-aside";
  return "";
}

const TEXT: Record<Cell, string> = { pass: "│", none: " ", tee: "├", end: "└" };

/** The lanes of a line as text (`│ ├●`): what the row's `data-glyph` and the static fallback show. */
export function laneText(line: Line): string {
  const pad = Math.max(0, Math.min(line.depth, MAX_LANES) - laneCells(line).length);
  return " ".repeat(pad) + laneCells(line).map((c) => TEXT[c]).join("") + (line.row.aside ? "◇" : "●");
}

/** The lanes and the dot of a row (one inline-flex span, no gaps, so the lines connect): the cells
 * in `.dnb-indent`, the dot in `.dnb-glyph`, the whole as text in `data-glyph`. */
export function lanes(line: Line): HTMLElement {
  const box = h("span", "dnb-lanes");
  box.dataset.glyph = laneText(line).trimStart();
  const indent = h("span", "dnb-indent");
  const cells = laneCells(line);
  // Lines deeper than the cells drawn keep their indent: pad with empty cells up to the drawn depth.
  const pad = Math.min(line.depth, MAX_LANES) - cells.length;
  for (let i = 0; i < pad; i++) indent.append(h("span", "dnb-lane dnb-lane-none"));
  cells.forEach((c, i) => {
    const el = h("span", `dnb-lane dnb-lane-${c}`);
    if (i === cells.length - 1 && (c === "tee" || c === "end")) {
      el.classList.add("dnb-lane-own");
      const s = style(line);
      if (s) el.classList.add(s);
    }
    indent.append(el);
  });
  const dot = h("span", "dnb-glyph dnb-dot", line.row.aside ? "◇" : "●");
  if (line.kids > 1) dot.classList.add("dnb-dot-fork");
  box.append(indent, dot);
  return box;
}
