/**
 * durable_nb entry-tree widget: the front end of durable_nb.widget.SessionWidget (anywidget's ES module).
 *
 * Python lays the tree out (durable_nb.layout) and syncs only small state (the traits of protocol.ts);
 * the page fetches the lines it draws and draws views Python computed. This module mounts the toolbar
 * and the panels of panels/index.ts and batches every change of one update message into one redraw.
 * It never computes a layout or a view and never writes the store.
 *
 * Safety: every piece of entry text goes into the DOM through textContent. Nothing here uses
 * innerHTML, creates <img>, or follows a URL from the data.
 */
import { Ctx } from "./context";
import { keyboard } from "./keys";
import { PANELS } from "./panels";
import { timelineStrip } from "./panels/timeline";
import { toolbar } from "./panels/toolbar";
import type { Model } from "./protocol";
import { keepFallback } from "./snapshot";

/** The traits whose change redraws the widget (`tree` has its own handler: the lines move). */
const REDRAWN = ["leaf_id", "elided", "selected_id", "views", "error", "session_id", "view", "labels", "comparison", "hidden", "read_only", "session_cost", "evaluation"];

function render({ model, el }: { model: Model; el: HTMLElement }): () => void {
  const ctx = new Ctx(model);
  const panels = PANELS.map((make) => make(ctx));
  const bars = toolbar(ctx, panels);
  const strip = timelineStrip(ctx);
  const keys = keyboard(ctx);
  const nav = document.createElement("div");
  nav.className = "dnb-nav";
  nav.append(strip.el, keys.el);
  ctx.root.append(...bars.els, nav, ...panels.map((p) => p.el));
  el.append(ctx.root);

  let firstPaint = true;
  let lastLeaf = "";
  let queued = false;
  /** Batch every change of one update message into one redraw. */
  function refresh(): void {
    if (queued) return;
    queued = true;
    queueMicrotask(() => {
      queued = false;
      const leaf = ctx.leaf();
      // reveal first: showing the tree paints it where it is scrolled (its top, at the first paint)
      if (firstPaint || leaf !== lastLeaf) ctx.hooks.reveal(ctx.selected() || leaf);
      bars.showView();
      if (firstPaint) {
        // `el` may not be laid out yet: reveal again once it is.
        requestAnimationFrame(() => {
          ctx.hooks.reveal(ctx.selected() || ctx.leaf());
          ctx.hooks.paintRows();
        });
      }
      firstPaint = false;
      lastLeaf = leaf;
      ctx.hooks.paintRows();
      for (const p of panels) p.draw();
      strip.draw();
      bars.draw();
      ctx.hooks.drawStatus();
      ctx.synced.want(model.get("view"), ctx.kernel);
      ctx.kernel.settle();
    });
  }
  ctx.hooks.refresh = refresh;

  const handlers = REDRAWN.map((k) => [`change:${k}`, () => refresh()] as const);
  for (const [ev, cb] of handlers) model.on(ev, cb);
  const unsubscribe = ctx.synced.subscribe(refresh);
  refresh();
  const stopFallback = keepFallback(ctx, el);
  return () => {
    stopFallback();
    for (const [ev, cb] of handlers) model.off(ev, cb);
    for (const p of panels) p.dispose?.();
    bars.dispose();
    strip.dispose();
    keys.dispose();
    ctx.kernel.dispose();
    unsubscribe();
    ctx.synced.dispose();
  };
}

export default { render };
export type { Model };
