import { describe, expect, it } from "vitest";
import { costText, duration, oneLine, plural, settingValue, short } from "../src/format";

describe("format", () => {
  it("shortens ids", () => {
    expect(short("0123456789ab")).toBe("01234567");
    expect(short("")).toBe("—");
    expect(short(undefined)).toBe("—");
  });

  it("writes durations", () => {
    expect(duration(12.4)).toBe("12 ms");
    expect(duration(3400)).toBe("3.4 s");
    expect(duration(12000)).toBe("12 s");
    expect(duration(NaN)).toBe("");
    expect(duration("5")).toBe("");
  });

  it("writes tokens and cost, nothing without usage", () => {
    const row = { id: "a", parent_id: "", type: "message" as const, preview: "", what: "assistant" };
    expect(costText({ ...row, tokens: [1234, 56], cost: "$0.00022" })).toBe("1,234 in / 56 out · $0.00022");
    expect(costText({ ...row, tokens: [1, 2] })).toBe("1 in / 2 out");
    expect(costText(row)).toBe("");
    expect(costText(undefined)).toBe("");
  });

  it("writes settings, plurals and one-line text", () => {
    expect(settingValue(null)).toBe("(not set)");
    expect(settingValue(0.5)).toBe("0.5");
    expect(plural(1, "message")).toBe("1 message");
    expect(plural(2, "message")).toBe("2 messages");
    expect(oneLine("  a \n b  ", 80)).toBe("a b");
    expect(oneLine("abcdef", 4)).toBe("abc…");
  });
});
