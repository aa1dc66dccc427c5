import { describe, expect, it } from "vitest";
import type { Kernel } from "../src/kernel";
import type { Model, Views } from "../src/protocol";
import { SyncedViews } from "../src/viewsync";

/** A model holding `state`, recording what the page sends, delivering custom messages to its listeners. */
function fakeModel(state: Record<string, unknown>) {
  const custom: ((msg: unknown) => void)[] = [];
  const sent: unknown[] = [];
  const model = {
    get: (k: string) => state[k],
    set: (k: string, v: unknown) => (state[k] = v),
    on: (ev: string, cb: (msg: unknown) => void) => ev === "msg:custom" && custom.push(cb),
    off: () => custom.splice(0),
    save_changes: () => {},
    send: (m: unknown) => sent.push(m),
  } as unknown as Model;
  return { model, sent, deliver: (msg: unknown) => custom.forEach((cb) => cb(msg)) };
}

const kernel = { request: () => true } as unknown as Kernel;
const views = (at: string, model: string[], transcript: string[]): Partial<Views> =>
  ({ at, following_leaf: true, model: model as never, transcript: transcript as never, entry: { id: at } as never, model_total: model.length });

describe("SyncedViews", () => {
  it("applies a reply's change to the parts it carries and holds the others stale", () => {
    const { model, sent, deliver } = fakeModel({ views: views("a", ["m1", "m2"], ["t1"]), views_rev: 3, leaf_id: "a" });
    const s = new SyncedViews(model);
    deliver({ reply: "views", rev: 1, seq: 4, base: 3, views: { at: "b", following_leaf: true, entry: { id: "b" } } });
    expect(s.current().at).toBe("b");
    expect(s.current().entry).toEqual({ id: "b" });
    s.want("tree", kernel);
    expect(sent).toEqual([]); // the tree's part (the entry) is current
    s.want("model", kernel);
    expect(sent).toEqual([{ action: "views" }]); // the model view was not carried: stale, asked once
    s.want("model", kernel);
    expect(sent.length).toBe(1);
    deliver({ reply: "views", rev: 1, seq: 4, base: -1, views: views("b", ["m2", "m3"], ["t2"]) });
    expect(s.current().model).toEqual(["m2", "m3"]);
    deliver({ reply: "views", rev: 1, seq: 5, base: 4, views: { at: "c" }, model: { drop: 1, keep: 1, add: ["m4"] } });
    expect(s.current().model).toEqual(["m3", "m4"]);
    expect(s.current().at).toBe("c");
  });

  it("puts a reply's head before the items it keeps (the window moved back: a re-run cell's branch)", () => {
    const { model, deliver } = fakeModel({ views: views("a", ["m2", "m3", "m4"], ["t1"]), views_rev: 3, leaf_id: "a" });
    const s = new SyncedViews(model);
    deliver({ reply: "views", rev: 1, seq: 4, base: 3, views: { at: "b" }, model: { drop: 0, keep: 2, add: ["m5"], head: ["m1"] } });
    expect(s.current().model).toEqual(["m1", "m2", "m3", "m5"]);
  });

  it("brings back the items the list's previous delta dropped, and asks for all when it does not hold them", () => {
    const { model, sent, deliver } = fakeModel({ views: views("a", ["m1", "m2", "m3"], ["t1"]), views_rev: 3, leaf_id: "a" });
    const s = new SyncedViews(model);
    deliver({ reply: "views", rev: 1, seq: 4, base: 3, views: { at: "b" }, model: { drop: 2, keep: 1, add: ["big"] } });
    expect(s.current().model).toEqual(["m3", "big"]);
    deliver({ reply: "views", rev: 1, seq: 5, base: 4, views: { at: "c" }, model: { drop: 0, keep: 1, add: ["u"], head: ["m0"], back: 2 } });
    expect(s.current().model).toEqual(["m0", "m1", "m2", "m3", "u"]);
    deliver({ reply: "views", rev: 1, seq: 6, base: 5, views: { at: "d" }, model: { drop: 0, keep: 5, add: [], back: 1 } });
    s.want("model", kernel); // the last delta dropped nothing: it cannot bring one back
    expect(sent).toEqual([{ action: "views" }]);
  });

  it("holds every list stale when a reply is not based on what it holds", () => {
    const { model, sent, deliver } = fakeModel({ views: views("a", ["m1"], ["t1"]), views_rev: 3, leaf_id: "a" });
    const s = new SyncedViews(model);
    deliver({ reply: "views", rev: 1, seq: 9, base: 8, views: { at: "z" }, model: { drop: 0, keep: 1, add: ["mz"] } });
    expect(s.current().model).toEqual(["m1"]); // not applied to the wrong base
    s.want("model", kernel);
    expect(sent).toEqual([{ action: "views" }]);
  });

  it("takes a whole value Python sent as the trait, and asks when drawn behind its leaf", () => {
    const state: Record<string, unknown> = { views: views("a", ["m1"], []), views_rev: 1, leaf_id: "b" };
    const { model, sent } = fakeModel(state);
    const s = new SyncedViews(model);
    s.want("tree", kernel);
    expect(sent).toEqual([{ action: "views" }]); // its views are at "a", the leaf is "b": another view got the replies
    state.views = views("b", ["m1", "m2"], []);
    state.views_rev = 7;
    expect(s.current().model).toEqual(["m1", "m2"]);
    s.want("model", kernel);
    expect(sent.length).toBe(1);
  });
});
