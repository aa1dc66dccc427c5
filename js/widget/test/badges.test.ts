import { describe, expect, it } from "vitest";
import { originLabel } from "../src/badges";

describe("originLabel", () => {
  it("shows a named origin as recorded", () => {
    expect(originLabel("cell:skill")).toBe("cell:skill");
    expect(originLabel("skill:brief")).toBe("skill:brief");
    expect(originLabel("")).toBe("");
  });
  it("shows a cell named by a generated UUID as just `cell`, never an execution count", () => {
    expect(originLabel("cell:3f2a6c01-9b1e-4c3d-8e2f-0a1b2c3d4e5f")).toBe("cell");
    expect(originLabel("cell:3F2A6C01-9B1E-4C3D-8E2F-0A1B2C3D4E5F")).toBe("cell");
    expect(originLabel("cell:3f2a6c01")).toBe("cell:3f2a6c01");
  });
});
