import { describe, expect, it } from "vitest";
import { provenanceLine, reusedLine } from "../src/mcp";
import { cellTitle, matches, outcome } from "../src/panels/grid";
import type { GridCell } from "../src/protocol";

const cell = (over: Partial<GridCell> = {}): GridCell => ({
  case: 0,
  variant: 0,
  passed: true,
  entry_id: "abc",
  reply: "Paris",
  verdicts: [{ grader: "correct", passed: true, reason: "has 'Paris'" }],
  cost: "",
  ms: 12,
  tokens: null,
  ...over,
});

describe("grid cells", () => {
  it("say pass, FAIL with the failing graders, ERROR, and the mean score", () => {
    expect(outcome(cell())).toBe("pass");
    const bad = cell({ passed: false, verdicts: [{ grader: "correct", passed: false }, { grader: "short", passed: true }] });
    expect(outcome(bad)).toBe("FAIL correct");
    expect(outcome(cell({ error: "model down" }))).toBe("ERROR");
    expect(outcome(cell({ score: 0.75 }))).toBe("pass · score 0.75");
  });
  it("filter by failures and by a baseline mark", () => {
    const f = { failures: true, differs: false };
    expect(matches(cell(), f)).toBe(false);
    expect(matches(cell({ passed: false }), f)).toBe(true);
    expect(matches(cell({ baseline: "changed" }), { failures: false, differs: true })).toBe(true);
    expect(matches(cell(), { failures: false, differs: true })).toBe(false);
  });
  it("have a tooltip of their verdicts and the reply's start", () => {
    expect(cellTitle(cell())).toBe("correct: pass (has 'Paris')\n\nreply: Paris");
    expect(cellTitle(cell({ error: "boom", reply: "" }))).toBe("boom");
  });
});

describe("MCP provenance", () => {
  it("is one line, as Python writes it", () => {
    const r = { name: "clock", server: "mcp-time", version: "1.2.0", command: "uvx mcp-server-time", duration_ms: 12.3, approval: "always" };
    expect(provenanceLine(r)).toBe("clock (mcp-time 1.2.0) · uvx mcp-server-time · 12 ms · approval: always");
    expect(provenanceLine({ server: "s", url: "http://h/mcp" })).toBe("s · http://h/mcp");
    expect(provenanceLine(null)).toBe("");
    expect(reusedLine({ reused: "0123456789ab" })).toBe("the stored result of entry 01234567 (tools reused: none ran)");
    expect(reusedLine({})).toBe("");
  });
});
