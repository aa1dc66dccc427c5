/**
 * The timeline strip above the panels: the session's turns (every branch) over time, one bar per turn
 * in time order (or per group of turns in a long session), its height the turn's cost (its tokens when no price is
 * known). Python computes it ({action: "timeline"}, durable_nb.widget.listing.timeline), at most a few
 * hundred bars; a click on a bar selects that turn in the tree. A turn gets the change of the timeline this
 * view holds (its last bars); a widget shown twice has two views that each hold their own, named by
 * `view` in the request and its reply (every view of the model receives every reply).
 */
import type { Ctx } from "../context";
import { h } from "../dom";
import { asReply, type TimelineReply, type Turn } from "../protocol";
import { openInTree } from "./list";

export interface Strip {
  el: HTMLElement;
  draw(): void;
  dispose(): void;
}

const money = (x: number) => (x >= 1 ? `$${x.toFixed(2)}` : `$${x.toPrecision(2)}`);

export function timelineStrip(ctx: Ctx): Strip {
  const { model } = ctx;
  const el = h("div", "dnb-timeline");
  el.setAttribute("role", "group");
  el.setAttribute("aria-label", "timeline: turns over time, cost per turn");
  const bars = h("div", "dnb-timeline-bars");
  const label = h("span", "dnb-timeline-label dnb-muted", "");
  el.append(label, bars);
  el.hidden = true;
  let askedRev = -1;
  let waiting = false; // a request not answered yet: a busy kernel answers once, after its cell
  let turns: Turn[] = [];
  let held = -1; // the seq of the timeline drawn: Python may answer with its change
  const me = Math.random().toString(36).slice(2, 10); // this view's id: every view of the model receives every reply

  /** Ask for the timeline when the layout moved since the last answer, one request at a time
   * (the reply is Python's timeline at its revision then: a turn's revisions cost one request). */
  function ask(): void {
    if (waiting || askedRev >= ctx.tree.rev || ctx.kernel.staleReason() || !ctx.tree.entries) return;
    askedRev = ctx.tree.rev;
    waiting = true;
    model.send({ action: "timeline", have: held, view: me });
  }

  function onTimeline(r: TimelineReply): void {
    if (r.view && r.view !== me) return; // another view's answer (the widget is shown twice)
    waiting = false;
    const base = typeof r.base === "number" ? r.base : -1;
    if (base !== -1 && base !== held) {
      held = -1; // a change of a timeline this view does not hold: ask for the whole
      askedRev = -1;
      ask();
      return;
    }
    held = typeof r.seq === "number" ? r.seq : -1;
    askedRev = Math.max(askedRev, r.rev);
    if (askedRev < ctx.tree.rev) ask(); // the layout moved after Python answered
    turns = base === -1 ? r.turns : turns.slice(0, r.start).concat(r.turns);
    el.hidden = turns.length < 2; // a strip of one turn says nothing
    const byCost = turns.some((t) => t.cost);
    const size = (t: Turn) => (byCost ? t.cost || 0 : t.tokens);
    const top = Math.max(...turns.map(size), 0) || 1;
    const first = turns[0].at.replace("T", " ").slice(0, 16);
    const last = turns[turns.length - 1].at.replace("T", " ").slice(0, 16);
    label.textContent = `${r.total} turns${first ? ` · ${first} → ${last}` : ""} · ${byCost ? "cost" : "tokens"} per turn`;
    bars.replaceChildren(
      ...turns.map((t) => {
        const b = h("button", "dnb-timeline-bar");
        b.type = "button";
        b.dataset.id = t.id;
        b.style.height = `${Math.max(8, (size(t) / top) * 100)}%`;
        if (t.on) b.classList.add("dnb-active");
        if (t.cost === null) b.classList.add("dnb-unknown");
        const cost = t.cost === null ? "cost unknown" : money(t.cost);
        b.title = `${t.n > 1 ? `${t.n} turns from ` : "turn "}${t.at.replace("T", " ").slice(0, 19)} · ${cost} · ${t.tokens.toLocaleString("en-US")} tokens`;
        b.setAttribute("aria-label", b.title);
        b.addEventListener("click", () => openInTree(ctx, t.id));
        return b;
      }),
    );
    mark();
  }

  /** Mark the bar of the turn the selection is in (the selected entry itself when it starts one). */
  function mark(): void {
    const sel = ctx.selected();
    for (const b of bars.children as HTMLCollectionOf<HTMLElement>) b.classList.toggle("dnb-selected", b.dataset.id === sel);
  }

  const onCustom = (msg: unknown) => {
    const r = asReply(msg);
    if (r?.reply === "timeline") onTimeline(r);
  };
  model.on("msg:custom", onCustom);
  return {
    el,
    draw() {
      ask();
      mark();
    },
    dispose() {
      model.off("msg:custom", onCustom);
    },
  };
}
