import { describe, expect, it } from "vitest";
import { Lines } from "../src/lines";
import type { Line } from "../src/protocol";

const line = (id: string): Line => ({
  row: { id, parent_id: "", type: "message", preview: id, what: "user" },
  depth: 0,
  mark: "cont",
  rails: [],
  kids: 0,
  on: false,
  elided: false,
});

describe("Lines", () => {
  it("keeps lines by index and finds an entry's line", () => {
    const c = new Lines();
    c.put(10, [line("a"), line("b")]);
    expect(c.lineOf("b")?.row.id).toBe("b");
    expect(c.index.get("a")).toBe(10);
    expect(c.lineOf("zz")).toBeUndefined();
  });

  it("forgets the lines from where the layout changed, and what was asked", () => {
    const c = new Lines();
    c.put(0, [line("a"), line("b"), line("c")]);
    c.asked.push([3, 9]);
    c.dropFrom(1);
    expect([...c.at.keys()]).toEqual([0]);
    expect(c.index.has("b") || c.index.has("c")).toBe(false);
    expect(c.asked).toEqual([]);
  });

  it("keeps the lines a change left as they were (a re-run's older siblings)", () => {
    const c = new Lines();
    c.put(0, [line("a"), line("b"), line("c"), line("d"), line("e")]);
    c.dropFrom(1, [2, 4]);
    expect([...c.at.keys()].sort()).toEqual([0, 2, 3]);
    expect(c.lineOf("c")).toBeDefined();
    expect(c.lineOf("b") || c.lineOf("e")).toBeUndefined();
  });

  it("puts a push's lines around the range it skips", () => {
    const c = new Lines();
    c.put(3, [line("f"), line("n1"), line("n2")], [4, 8]);
    expect([...c.at.keys()].sort((a, b) => a - b)).toEqual([3, 8, 9]);
    expect(c.index.get("n1")).toBe(8);
    c.put(4, [line("x")], [4, 6]);
    expect(c.index.get("x")).toBe(6);
  });

  it("a turn's tail-only revisions ask once for lines not held, never for those held or in flight", () => {
    const c = new Lines();
    c.put(0, [line("a"), line("b"), line("c"), line("d")]);
    expect(c.missing(0, 4)).toBeNull(); // held: nothing to ask
    expect(c.missing(0, 6)).toEqual([4, 6]);
    c.sent(4, 6); // asked while the kernel runs the turn
    for (const from of [6, 7, 8]) {
      c.dropFrom(from); // the turn's revisions change only the tail
      expect(c.missing(0, 6)).toBeNull(); // the request in flight will do: not asked again
    }
    expect(c.answered(4)).toBe(true); // its reply (at the kernel's revision then) arrives
    expect(c.answered(4)).toBe(false);
    expect(c.missing(0, 6)).toEqual([4, 6]); // not put (a stale reply): asked again
  });

  it("an entry moved to another index is found at its new one only", () => {
    const c = new Lines();
    c.put(0, [line("a"), line("b")]);
    c.put(1, [line("a")]); // "a" now drawn at 1, over "b"
    expect(c.index.get("a")).toBe(1);
    expect(c.index.has("b")).toBe(false);
  });

  it("asks only for what it has neither got nor asked for", () => {
    const c = new Lines();
    c.put(0, [line("a"), line("b")]);
    c.asked.push([5, 8]);
    expect(c.missing(0, 10)).toEqual([2, 10]);
    expect(c.missing(0, 2)).toBeNull();
    expect(c.missing(5, 8)).toBeNull();
    expect(c.pending(6) && !c.pending(8)).toBe(true);
  });

  it("trims to its size, keeping the lines nearest the window", () => {
    const c = new Lines(3);
    c.put(0, ["a", "b", "c", "d", "e"].map(line));
    c.trim(4);
    expect([...c.at.keys()].sort()).toEqual([2, 3, 4]);
    expect(c.index.has("a")).toBe(false);
  });
});
