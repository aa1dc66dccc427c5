import { describe, expect, it } from "vitest";
import { chipText, chipTitle } from "../src/chips";

describe("chips", () => {
  it("read a verdict as pass/fail with its grader, as the static fallback does", () => {
    expect(chipText({ kind: "verdict", key: "r/exact", id: "v1", count: 1, grader: "exact", passed: true })).toBe("pass · exact");
    expect(chipText({ kind: "verdict", key: "r/judge", id: "v2", count: 2, grader: "judge", passed: false, score: 0.2 })).toBe("fail · judge · 0.2 ×2");
    expect(chipText({ kind: "verdict", key: "r/g", id: "v3", count: 1, grader: "g", error: "boom" })).toBe("error · g");
  });
  it("read an annotation as its score, tags and author; the note is in the title", () => {
    const c = { kind: "annotation", key: "ana", id: "a1", count: 2, by: "ana", score: 0.5, tags: ["wrong-tool"], note: "no", at: "2026-01-01" };
    expect(chipText(c)).toBe("★ 0.5 #wrong-tool · ana ×2");
    expect(chipTitle(c)).toBe("annotation by ana · 2026-01-01 · the latest of 2 (all kept in the log)\nno");
    expect(chipText({ kind: "annotation", key: "", id: "a2", count: 1, note: "just a note" })).toBe("note");
  });
});
