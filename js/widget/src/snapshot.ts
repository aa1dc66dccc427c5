/**
 * The saved notebook shows the session as it was when saved. The page around the widget asks for the
 * output's fallback when it needs it, as a SAVE_EVENT on the widget's root (durable_nb's JupyterLab /
 * Notebook 7 extension, js/labextension/src/output.ts, does so as the notebook is saved, and once after a
 * display that carried a short fallback). If the session changed since the last fallback (the tree, the
 * leaf, the labels, the views, the tab or the comparison), the widget asks Python ({action: "fallback"})
 * and hands the reply back as a bubbling FALLBACK_EVENT on `el`, which the extension writes into this
 * widget's output; `detail.wait` gets a promise settled once that is done (or the kernel did not answer
 * within ANSWER_MS). Nothing is asked while the session is unchanged, of a stale kernel or by a page
 * without one (the exported page); elsewhere nobody asks. A turn therefore sends no fallback.
 */
import type { Ctx } from "./context";
import { asReply } from "./protocol";

export const FALLBACK_EVENT = "durable-nb-fallback";
export const SAVE_EVENT = "durable-nb-want-fallback";
export const ANSWER_MS = 5000;
const RESEND_MS = 60_000; // a request that long unanswered (a kernel that went away) is sent again
const CHANGES = ["tree", "leaf_id", "labels", "views", "view", "comparison", "hidden"];

export interface WantFallback {
  /** called with a promise settled once the fresh fallback was handed up (or none was needed) */
  wait?: (done: Promise<void>) => void;
}

/** Start answering the page's SAVE_EVENTs; returns the function that stops it. */
export function keepFallback(ctx: Ctx, el: HTMLElement): () => void {
  const { model } = ctx;
  let changes = 1; // the output's fallback was made before this view drew: unknown, so asked once
  let asked = 0; // the change count when the pending request was sent
  let fetched = 0; // the change count of the fallback last handed up
  let sentAt = 0;
  let waiting: Array<() => void> = [];
  const settle = () => {
    const w = waiting;
    waiting = [];
    for (const f of w) f();
  };
  const changed = () => {
    changes++;
  };
  const onWant = (ev: Event) => {
    ev.stopPropagation();
    const detail = ((ev as CustomEvent<WantFallback>).detail || {}) as WantFallback;
    if (fetched === changes || ctx.kernel.staleReason()) return detail.wait?.(Promise.resolve());
    const done = new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ANSWER_MS);
      waiting.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
    if (waiting.length === 1 || Date.now() - sentAt > RESEND_MS) {
      asked = changes;
      sentAt = Date.now();
      model.send({ action: "fallback" });
    }
    detail.wait?.(done);
  };
  const onCustom = (msg: unknown) => {
    const r = asReply(msg);
    if (r?.reply !== "fallback") return;
    fetched = asked;
    el.dispatchEvent(new CustomEvent(FALLBACK_EVENT, { bubbles: true, detail: { html: r.html, text: r.text } }));
    settle();
  };
  if (model.offline) return () => {};
  for (const k of CHANGES) model.on(`change:${k}`, changed);
  model.on("msg:custom", onCustom);
  el.addEventListener(SAVE_EVENT, onWant);
  return () => {
    settle();
    for (const k of CHANGES) model.off(`change:${k}`, changed);
    model.off("msg:custom", onCustom);
    el.removeEventListener(SAVE_EVENT, onWant);
  };
}
