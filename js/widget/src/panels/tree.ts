/**
 * The tree panel: the legend, the virtualized rows (only the visible window plus OVERSCAN is drawn,
 * its lines fetched from Python with a MARGIN by {action: "lines"}), and the details of the entry
 * the views are at. Rows are revealed through {action: "locate"} when their line is not here.
 */
import { injectionBadge, resultBadge } from "../badges";
import { chipEls } from "../chips";
import type { Ctx } from "../context";
import { h } from "../dom";
import { costText, short } from "../format";
import { asReply, type Line, type LinesReply, type Tree } from "../protocol";
import { lanes } from "../lanes";
import { detailsPart } from "./details";
import type { Panel } from "./panel";

export const ROW_H = 26; // px; equals .dnb-row height in widget.css
const OVERSCAN = 10; // rows drawn above and below the visible window
const MARGIN = 30; // lines fetched beyond the drawn ones
const MAX_INDENT = 16; // deeper branches are drawn at this indent (the depth is still shown; lanes.ts MAX_LANES)
const LINES_WAIT_MS = 3000; // lines not answered by then: say the kernel is busy or gone
const LINES_WAIT =
  "the tree's entries come from the kernel, which has not answered yet: it is busy running a cell, or gone — run %durable show for a fresh view";
const KEYS = [
  ["dnb-key-active", "active path"],
  ["dnb-key-leaf", "leaf"],
  ["dnb-key-branch", "branch (├ more follow, └ last)"],
  ["dnb-key-eph", "ephemeral (off the chain)"],
  ["dnb-key-aside", "◇ another tool's record (off the chain)"],
  ["dnb-key-elided", "elided by compaction"],
];

export function treePanel(ctx: Ctx): Panel {
  const { model, cache } = ctx;
  const el = h("div", "dnb-panel dnb-tree-panel");
  const legend = h("div", "dnb-legend");
  for (const [cls, text] of KEYS) {
    const k = h("span", "dnb-key");
    k.append(h("span", `dnb-swatch ${cls}`), document.createTextNode(text));
    legend.append(k);
  }
  const scroll = h("div", "dnb-scroll");
  scroll.tabIndex = 0;
  const spacer = h("div", "dnb-spacer");
  scroll.append(spacer);
  const details = detailsPart(ctx);
  el.append(legend, scroll, details.el);

  let ahead: LinesReply[] = []; // pushed before their `tree` update
  let wantIndex: number | null = null; // select the line at this index once it arrives
  let wantReveal = ""; // scroll to this entry once Python says where it is
  let owed = ""; // reveal this entry when the panel is shown: a hidden element cannot scroll
  let linesTimer: ReturnType<typeof setTimeout> | undefined;
  let scheduled = false;

  /** Ask Python for the lines of [a, b) this page has not got or asked for yet. */
  function ensure(a: number, b: number): void {
    const gap = cache.missing(Math.max(0, a), Math.min(ctx.tree.lines, b));
    if (!gap || ctx.kernel.staleReason()) return;
    const [lo, hi] = gap;
    cache.sent(lo, hi);
    model.send({ action: "lines", start: lo, stop: hi });
    const rev = ctx.tree.rev;
    clearTimeout(linesTimer);
    linesTimer = setTimeout(() => {
      if (ctx.tree.rev !== rev || cache.at.has(lo) || !ctx.notice.hidden || ctx.kernel.stale) return;
      ctx.notice.hidden = false;
      ctx.notice.textContent = LINES_WAIT;
    }, LINES_WAIT_MS);
  }

  /** A new layout revision: forget the lines from where it changed, take the lines pushed ahead of it. */
  function onTree(): void {
    const t: Tree = model.get("tree") || ctx.tree;
    if (t.rev === ctx.tree.rev) return;
    const next = t.rev === ctx.tree.rev + 1;
    const from = next && typeof t.changed_from === "number" ? t.changed_from : 0;
    ctx.tree = t;
    cache.dropFrom(from, next ? ahead.find((p) => p.rev === t.rev && p.kept)?.kept : undefined);
    cache.rev = t.rev;
    for (const p of ahead) if (p.rev === t.rev) cache.put(p.start, p.lines, p.kept);
    ahead = ahead.filter((p) => p.rev > t.rev);
    if (ctx.found.query) ctx.hooks.searchAgain(); // the hits' lines moved: ask again, keeping the current hit
    ctx.hooks.refresh();
  }

  /** Python's replies: lines, and where an entry is. */
  function onCustom(msg: unknown): void {
    const r = asReply(msg);
    if (r?.reply === "lines") {
      const mine = cache.answered(r.start);
      if (r.rev > ctx.tree.rev) ahead.push(r);
      if (r.rev !== ctx.tree.rev) {
        if (mine && r.rev < ctx.tree.rev) paintRows(); // answered before a newer layout: ask again
        return;
      }
      cache.put(r.start, r.lines);
      if (ctx.notice.textContent === LINES_WAIT) {
        ctx.notice.hidden = true;
        ctx.notice.textContent = "";
      }
      cache.trim(Math.floor(scroll.scrollTop / ROW_H));
      if (wantIndex !== null && cache.at.has(wantIndex)) {
        const line = cache.at.get(wantIndex) as Line;
        wantIndex = null;
        if (line.row.id) ctx.select(line.row.id);
      }
      paintRows();
      details.draw();
    } else if (r?.reply === "locate" && r.rev === ctx.tree.rev && r.id === wantReveal) {
      wantReveal = "";
      if (r.index >= 0) scrollTo(r.index);
    }
  }

  /** Draw one tree row. */
  function drawRow(line: Line, index: number, leaf: string, at: string): HTMLElement {
    const r = line.row;
    if (!r) return placeholder(index);
    const div = h("div", "dnb-row");
    div.style.top = `${index * ROW_H}px`;
    div.dataset.id = r.id;
    div.setAttribute("role", "treeitem");
    div.setAttribute("aria-level", String(line.depth + 1));
    if (line.on) div.classList.add("dnb-active");
    if (r.id === leaf) div.classList.add("dnb-leaf");
    if (at && r.id === at) div.classList.add("dnb-selected"); // "" is the START row, never "selected"
    if (r.injected === "ephemeral") div.classList.add("dnb-eph");
    if (r.aside) div.classList.add("dnb-aside");
    if (line.elided) div.classList.add("dnb-elided");
    if (ctx.hitRows.has(r.id)) {
      div.classList.add("dnb-hit");
      const cur = ctx.found.hits[ctx.found.at];
      if (cur && (cur.drawn || cur.id) === r.id) div.classList.add("dnb-hit-current");
    }
    div.classList.add(`dnb-type-${r.type}`);
    div.append(lanes(line));
    if (line.depth > MAX_INDENT) div.append(h("span", "dnb-badge", `depth ${line.depth}`));
    if (r.type === "start") div.classList.add("dnb-start");
    div.append(h("span", `dnb-label dnb-role-${r.role || r.type}`, r.what || r.type));
    div.append(...chipEls(ctx.namesOf(r.id), line.chips));
    const inj = injectionBadge(r);
    if (inj) div.append(inj);
    if (r.id === leaf) div.append(h("span", "dnb-badge dnb-leafmark", "leaf"));
    const pick = ctx.picks.indexOf(r.id);
    if (pick >= 0) div.append(h("span", "dnb-badge dnb-pickmark", `pick ${pick + 1}`));
    if (line.kids > 1) div.append(h("span", "dnb-badge dnb-fork", `${line.kids} branches`));
    if (r.thinking) div.append(h("span", "dnb-badge dnb-think", "thinking"));
    if (ctx.unanswered(line, leaf)) div.append(h("span", "dnb-badge dnb-failed dnb-noreply", "no reply"));
    if (r.tools) div.append(h("span", "dnb-badge dnb-tool", `calls ${r.tools.join(", ")}`));
    if (r.bad_arguments) div.append(h("span", "dnb-badge dnb-failed", "malformed arguments"));
    const res = resultBadge(r);
    if (res) div.append(res);
    if (r.reminders) div.append(h("span", "dnb-badge dnb-meta", `+${r.reminders} reminder`));
    if (r.attachments) div.append(h("span", "dnb-badge", r.attachments.join(", ")));
    const cost = costText(r);
    if (cost) div.append(h("span", `dnb-badge dnb-cost${r.cost === "cost unknown" ? " dnb-unknown" : ""}`, cost));
    let text = r.preview;
    if (r.type === "compaction") {
      const span = r.elides ? `elides ${r.elides[2]} entries ${short(r.elides[0])}…${short(r.elides[1])}` : "elides nothing";
      text = `${span} · ~${r.tokens_before || 0} tokens · ${r.preview}`;
    }
    div.append(h("span", "dnb-preview", text));
    div.title = `${r.id}${r.created_at ? " · " + r.created_at : ""}`;
    return div;
  }

  /** A line not here yet: drawn empty at its place until Python's answer arrives. */
  function placeholder(index: number): HTMLElement {
    const div = h("div", "dnb-row dnb-loading");
    div.style.top = `${index * ROW_H}px`;
    div.append(h("span", "dnb-muted", "…"));
    return div;
  }

  /** Draw only the rows in (and near) the visible window, asking Python for missing lines. O(visible rows).
   * Nothing while the panel is hidden (it has no window: its lines would be the top's); `shown` paints. */
  function paintRows(): void {
    if (el.hidden) return;
    const n = fit();
    const top = scroll.scrollTop;
    const height = scroll.clientHeight || 400;
    const first = Math.max(0, Math.floor(top / ROW_H) - OVERSCAN);
    const last = Math.min(n, Math.ceil((top + height) / ROW_H) + OVERSCAN);
    const leaf = ctx.leaf();
    const at = ctx.selected();
    const frag = document.createDocumentFragment();
    for (let i = first; i < last; i++) {
      const line = cache.at.get(i);
      frag.append(line ? drawRow(line, i, leaf, at) : placeholder(i));
    }
    spacer.replaceChildren(frag);
    ensure(first - MARGIN, last + MARGIN);
  }

  /** Size the scrolled area to the tree's lines (a scroll past its old end would stop there); returns their count. */
  function fit(): number {
    spacer.style.height = `${ctx.tree.lines * ROW_H}px`;
    return ctx.tree.lines;
  }

  /** Scroll the tree so line i is visible (centred when it was not). */
  function scrollTo(i: number): void {
    fit();
    const top = i * ROW_H;
    const height = scroll.clientHeight || 400;
    if (top < scroll.scrollTop || top + ROW_H > scroll.scrollTop + height) scroll.scrollTop = Math.max(0, top - height / 2);
    paintRows();
  }

  /** Scroll the tree so the row of `id` is visible (asking Python where it is if need be); while the
   * panel is hidden, once it is shown (the latest such entry). */
  function reveal(id: string): void {
    if (!id) return;
    if (el.hidden) {
      owed = id;
      return;
    }
    owed = "";
    const i = ctx.indexOf(id);
    if (i !== undefined) return scrollTo(i);
    if (ctx.kernel.staleReason()) return;
    wantReveal = id;
    model.send({ action: "locate", id });
  }

  scroll.addEventListener("scroll", () => {
    if (scheduled) return;
    scheduled = true;
    requestAnimationFrame(() => {
      scheduled = false;
      paintRows();
    });
  });
  // Arrow keys move the selection through the drawn order; Home/End jump.
  scroll.addEventListener("keydown", (ev) => {
    const n = ctx.tree.lines;
    if (!n || !["ArrowDown", "ArrowUp", "Home", "End"].includes(ev.key)) return;
    ev.preventDefault();
    const cur = ctx.selected() || ctx.leaf();
    const i = ctx.indexOf(cur) ?? -1;
    const j = ev.key === "Home" ? 0 : ev.key === "End" ? n - 1 : Math.max(0, Math.min(n - 1, i + (ev.key === "ArrowDown" ? 1 : -1)));
    const line = cache.at.get(j);
    if (line) {
      if (line.row.id) ctx.select(line.row.id);
    } else wantIndex = j; // selected when its line arrives
    scrollTo(j);
  });
  scroll.addEventListener("click", (ev) => {
    const rowEl = (ev.target as HTMLElement).closest<HTMLElement>(".dnb-row");
    if (rowEl && rowEl.dataset.id) ctx.select(rowEl.dataset.id);
  });

  model.on("change:tree", onTree);
  model.on("msg:custom", onCustom);
  Object.assign(ctx.hooks, { paintRows, scrollTo, reveal, drawDetails: details.draw });
  return {
    name: "tree",
    tab: "Tree",
    el,
    draw: details.draw,
    shown() {
      if (owed) reveal(owed);
      paintRows();
    },
    dispose() {
      model.off("change:tree", onTree);
      model.off("msg:custom", onCustom);
      clearTimeout(linesTimer);
    },
  };
}
