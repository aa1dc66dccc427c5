import { describe, expect, it } from "vitest";
import { COLUMNS, type Row, sorted } from "../src/browser/table";

const row = (name: string, over: Partial<Row> = {}): Row => ({
  ref: name,
  name,
  tool: "durable_nb",
  entries: 2,
  turns: 1,
  branches: 1,
  models: [],
  input_tokens: 10,
  output_tokens: 5,
  cost: 0.01,
  cost_text: "$0.0100",
  last: "2026-01-01T00:00:00Z",
  size: 100,
  read_only: false,
  problem: "",
  ...over,
});

describe("the session browser's sort", () => {
  const rows = [
    row("b", { cost: 0.5, last: "2026-03-01T00:00:00Z" }),
    row("a", { cost: null, last: "2026-02-01T00:00:00Z" }),
    row("c", { cost: 0.1, last: "" }),
  ];
  const names = (rs: Row[]) => rs.map((r) => r.name);

  it("orders numbers and dates either way, unknown values last both ways", () => {
    expect(names(sorted(rows, "-cost"))).toEqual(["b", "c", "a"]);
    expect(names(sorted(rows, "cost"))).toEqual(["c", "b", "a"]);
    expect(names(sorted(rows, "-last"))).toEqual(["b", "a", "c"]);
    expect(names(sorted(rows, "last"))).toEqual(["a", "b", "c"]);
  });

  it("orders names as text, an unknown column by last activity, ties in the given order", () => {
    expect(names(sorted(rows, "name"))).toEqual(["a", "b", "c"]);
    expect(names(sorted(rows, "nonsense"))).toEqual(["a", "b", "c"]);
    expect(names(sorted([row("x"), row("y")], "-turns"))).toEqual(["x", "y"]);
  });

  it("writes tokens as in / out and a log's tool in the read-only column", () => {
    const col = (name: string) => COLUMNS.find((c) => c.name === name)!;
    expect(col("tokens").text(row("t", { input_tokens: 1234, output_tokens: 56 }))).toBe("1,234 / 56");
    expect(col("tokens").text(row("t", { input_tokens: null }))).toBe("");
    expect(col("read_only").text(row("l", { read_only: true, tool: "claude_code" }))).toBe("Claude Code");
    expect(col("read_only").text(row("s"))).toBe("");
  });
});
