import { describe, expect, it } from "vitest";
import { linkedRef, matches, resolveRef } from "../src/offline";

describe("deep links", () => {
  const ids = ["0123456789ab", "0123ffffffff", "abcdef000000"];
  it("read #entry=REF", () => {
    expect(linkedRef("#entry=v1")).toBe("v1");
    expect(linkedRef("#entry=a%20b")).toBe("a b");
    expect(linkedRef("#other")).toBeNull();
    expect(linkedRef("")).toBeNull();
  });
  it("resolve an id, a label or a unique 4+ character prefix, as labels.resolve does", () => {
    expect(resolveRef("abcdef000000", ids, {})).toEqual(["abcdef000000", ""]);
    expect(resolveRef("v1", ids, { v1: "0123ffffffff" })).toEqual(["0123ffffffff", ""]);
    expect(resolveRef("abcd", ids, {})).toEqual(["abcdef000000", ""]);
    expect(resolveRef("0123", ids, {})[1]).toContain("starts 2 entry ids");
    expect(resolveRef("abc", ids, {})[1]).toContain("at least 4 characters");
    expect(resolveRef("zzzz", ids, {})[1]).toContain("names no entry");
    expect(resolveRef("v2", ids, { v2: "gone" })[0]).toBe("");
  });
});

describe("the page's list filter", () => {
  it("keeps what every given field allows", () => {
    const f = { role: "assistant", tools: ["search"], tags: ["x"], scores: [0.6], error: false };
    expect(matches(f, {}, false)).toBe(true);
    expect(matches(f, { role: "user" }, false)).toBe(false);
    expect(matches(f, { tool: "search", tag: "x", min_score: 0.5 }, false)).toBe(true);
    expect(matches(f, { max_score: 0.5 }, false)).toBe(false);
    expect(matches(f, { error: true }, false)).toBe(false);
    expect(matches(f, { on_path: true }, false)).toBe(false);
  });
});
