/**
 * The saved notebook shows the session as it was when saved: after the session changed (the tree, the
 * leaf, the labels, the views, the tab or the comparison), once the widget has been quiet for
 * QUIET_MS, ask Python for the output's fallback ({action: "fallback"}) and hand the reply to the page
 * around the widget as a bubbling FALLBACK_EVENT on `el`. durable_nb's JupyterLab / Notebook 7
 * extension (js/labextension/src/output.ts) writes it into this widget's output; elsewhere the event
 * goes nowhere. Nothing is asked of a stale kernel or by a page without one (the exported page).
 */
import type { Ctx } from "./context";
import { asReply } from "./protocol";

export const FALLBACK_EVENT = "durable-nb-fallback";
export const QUIET_MS = 700;
const CHANGES = ["tree", "leaf_id", "labels", "views", "view", "comparison", "hidden"];

/** Start keeping the output's fallback fresh; returns the function that stops it. */
export function keepFallback(ctx: Ctx, el: HTMLElement): () => void {
  const { model } = ctx;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const ask = () => {
    if (!ctx.kernel.staleReason()) model.send({ action: "fallback" });
  };
  const changed = () => {
    clearTimeout(timer);
    timer = setTimeout(ask, QUIET_MS);
  };
  const onCustom = (msg: unknown) => {
    const r = asReply(msg);
    if (r?.reply === "fallback") {
      el.dispatchEvent(new CustomEvent(FALLBACK_EVENT, { bubbles: true, detail: { html: r.html, text: r.text } }));
    }
  };
  if (model.offline) return () => {};
  for (const k of CHANGES) model.on(`change:${k}`, changed);
  model.on("msg:custom", onCustom);
  return () => {
    clearTimeout(timer);
    for (const k of CHANGES) model.off(`change:${k}`, changed);
    model.off("msg:custom", onCustom);
  };
}
