/**
 * "Copy link" in an entry's details: on an exported page, the page's address with `#entry=ID` (opening it
 * selects that entry and scrolls to it); in a notebook, the line that shows it (`%durable show ID`).
 * The clipboard where the browser allows it, else the text is selected in a box for the reader to copy.
 */
import { button, h } from "./dom";

/** Whether this widget runs in an exported page (durable_nb.share.page), not in a notebook. */
export const onExportedPage = (): boolean => typeof document !== "undefined" && !!document.getElementById("dnb-data");

/** The link to entry `id` here: `<page>#entry=<id>` on an exported page, `%durable show <id>` in a notebook. */
export function linkTo(id: string): string {
  if (onExportedPage()) return `${location.href.split("#")[0]}#entry=${encodeURIComponent(id)}`;
  return `%durable show ${id}`;
}

/** The "Copy link" button of entry `id` and the line that says what was copied. */
export function copyLink(id: string): HTMLElement {
  const wrap = h("span", "dnb-copy-link");
  const said = h("span", "dnb-muted dnb-copied");
  const text = linkTo(id);
  const b = button("dnb-action dnb-copy", onExportedPage() ? "Copy link" : "Copy %durable show", () => {
    const done = () => (said.textContent = ` copied: ${text}`);
    const fallback = () => {
      const box = h("input", "dnb-copy-box");
      box.value = text;
      box.readOnly = true;
      said.replaceChildren(box);
      box.select();
      try {
        if (document.execCommand("copy")) return done();
      } catch {
        /* the box stays, selected */
      }
    };
    if (navigator.clipboard && window.isSecureContext) navigator.clipboard.writeText(text).then(done, fallback);
    else fallback();
  });
  b.title = onExportedPage() ? `Copy a link that opens this page at this entry: ${text}` : `Copy the line that shows this entry in a notebook: ${text}`;
  b.dataset.link = text;
  wrap.append(b, said);
  return wrap;
}
