import { describe, expect, it } from "vitest";
import type { Ctx } from "../src/context";
import { FALLBACK_EVENT, SAVE_EVENT, keepFallback } from "../src/snapshot";

/** A model whose listeners the test fires, recording what the page sends. */
function setup(stale = "") {
  const on = new Map<string, ((msg?: unknown) => void)[]>();
  const sent: unknown[] = [];
  const model = {
    offline: false,
    on: (ev: string, cb: (msg?: unknown) => void) => on.set(ev, [...(on.get(ev) || []), cb]),
    off: (ev: string, cb: (msg?: unknown) => void) => on.set(ev, (on.get(ev) || []).filter((f) => f !== cb)),
    send: (m: unknown) => sent.push(m),
  };
  const ctx = { model, kernel: { staleReason: () => stale } } as unknown as Ctx;
  const el = new EventTarget() as unknown as HTMLElement;
  const handed: unknown[] = [];
  el.addEventListener(FALLBACK_EVENT, (ev) => handed.push((ev as CustomEvent).detail));
  const fire = (ev: string, msg?: unknown) => (on.get(ev) || []).forEach((cb) => cb(msg));
  /** the extension's save: a SAVE_EVENT; returns the promise the widget handed back */
  const save = () => {
    let done: Promise<void> | undefined;
    el.dispatchEvent(new CustomEvent(SAVE_EVENT, { detail: { wait: (p: Promise<void>) => (done = p) } }));
    return done;
  };
  const stop = keepFallback(ctx, el);
  return { sent, handed, fire, save, stop };
}

describe("keepFallback", () => {
  it("asks for the fallback only when the page saves, and only if the session changed since", async () => {
    const { sent, handed, fire, save } = setup();
    fire("change:tree"); // a turn: nothing is asked
    fire("change:views");
    expect(sent).toEqual([]);
    const first = save(); // the output's fallback predates this view: asked once
    expect(sent).toEqual([{ action: "fallback" }]);
    fire("msg:custom", { reply: "fallback", rev: 1, html: "<p>h</p>", text: "t" });
    await first;
    expect(handed).toEqual([{ html: "<p>h</p>", text: "t" }]);
    await save(); // unchanged since: nothing asked, settled at once
    expect(sent.length).toBe(1);
    fire("change:leaf_id");
    const again = save();
    const twice = save(); // one request in flight serves both
    expect(sent.length).toBe(2);
    fire("msg:custom", { reply: "fallback", rev: 2, html: "<p>h2</p>", text: "t2" });
    await Promise.all([again, twice]);
    expect(handed.length).toBe(2);
  });

  it("asks nothing of a stale kernel and stops when the view goes", async () => {
    const s = setup("restarted");
    await s.save();
    expect(s.sent).toEqual([]);
    const t = setup();
    t.stop();
    expect(t.save()).toBeUndefined(); // nobody listens any more
    expect(t.sent).toEqual([]);
  });
});
