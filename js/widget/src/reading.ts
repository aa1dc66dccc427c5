/**
 * How message text reads in the views and the details: prose as safe Markdown (markdown.ts), long text
 * folded behind "Show more", and a role's block heading.
 *
 * What is prose: the text of user, assistant and system messages and of notes (a person or a model
 * wrote it as Markdown). Tool results, JSON and other tools' records stay verbatim (pre-wrapped text).
 */
import { button, h } from "./dom";
import { renderMarkdown } from "./markdown";

/** Text longer than this (characters) or than COLLAPSE_LINES lines is folded at first. */
export const COLLAPSE_CHARS = 1500;
export const COLLAPSE_LINES = 18;

/** True for the roles whose text is prose (drawn as Markdown). */
export function isProse(role: string | undefined): boolean {
  return role === "user" || role === "assistant" || role === "system" || role === "note";
}

/** A text body: Markdown when `prose`, else verbatim (pre-wrapped). */
export function textBody(text: string, prose: boolean): HTMLElement {
  return prose ? renderMarkdown(text) : h("div", "dnb-text", text);
}

/** True when `text` is long enough to fold. O(len(text)). */
export function isLong(text: string): boolean {
  if (text.length > COLLAPSE_CHARS) return true;
  let lines = 1;
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10 && ++lines > COLLAPSE_LINES) return true;
  return false;
}

/** Wrap `body` so that it starts folded with a "Show more" / "Show less" toggle when `long`; else return it. */
export function collapsible(body: HTMLElement, long: boolean): HTMLElement {
  if (!long) return body;
  const box = h("div", "dnb-collapse dnb-collapsed");
  const toggle = button("dnb-action dnb-more-toggle", "Show more", () => {
    const folded = box.classList.toggle("dnb-collapsed");
    toggle.textContent = folded ? "Show more" : "Show less";
    toggle.setAttribute("aria-expanded", String(!folded));
  });
  toggle.setAttribute("aria-expanded", "false");
  box.append(body, toggle);
  return box;
}

/** The heading of a role block: the role (or what the entry is) as the block's title, then its badges. */
export function roleHead(title: string, cls = ""): HTMLElement {
  const head = h("div", `dnb-card-head dnb-role-head${cls ? " " + cls : ""}`);
  head.append(h("span", "dnb-label dnb-role-title", title));
  return head;
}
