import { describe, expect, it } from "vitest";
import { asReply } from "../src/protocol";

describe("asReply", () => {
  it("reads the three replies", () => {
    expect(asReply({ reply: "lines", rev: 2, start: 0, total: 1, lines: [] })?.reply).toBe("lines");
    expect(asReply({ reply: "locate", rev: 2, id: "x", index: -1, drawn: "" })?.reply).toBe("locate");
    expect(asReply({ reply: "search", rev: 2, query: "q", total: 0, hits: [] })?.reply).toBe("search");
  });

  it("refuses anything else", () => {
    for (const bad of [null, "lines", 3, {}, { reply: "lines", rev: 1 }, { reply: "lines", rev: "1", start: 0, lines: [] },
      { reply: "locate", rev: 1, id: 5, index: 0 }, { reply: "search", rev: 1, query: "q", total: 1 }, { reply: "other", rev: 1 }]) {
      expect(asReply(bad)).toBeNull();
    }
  });
});
