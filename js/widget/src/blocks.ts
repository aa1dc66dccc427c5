/** Content blocks (as Python's codec encodes them) drawn as text. */
import { h } from "./dom";
import type { Block } from "./protocol";
import { collapsible, isLong, textBody } from "./reading";

/** Draw `blocks`; `forModel` marks reminders as model-only context; `prose` draws text blocks as safe
 * Markdown (reading.ts: a user's, an assistant's or a system prompt's text), else verbatim. Long text
 * starts folded behind "Show more". */
export function drawBlocks(blocks: Block[] | undefined, forModel: boolean, prose = false): HTMLElement {
  const box = h("div", "dnb-blocks");
  for (const b of blocks || []) {
    if (b.type === "text") box.append(collapsible(textBody(b.text || "", prose), isLong(b.text || "")));
    else if (b.type === "reminder") {
      const r = h("div", "dnb-reminder");
      r.append(h("span", "dnb-badge dnb-meta", forModel ? "reminder block · model only" : "reminder block"));
      r.append(h("div", "dnb-text", b.text));
      box.append(r);
    } else if (b.type === "tool_call") {
      const c = h("div", "dnb-toolcall");
      c.append(h("span", "dnb-badge dnb-tool", `tool call · ${b.name} · ${b.id}`));
      const args = b.arguments ?? {};
      if (typeof args._raw === "string" && typeof args._error === "string") {
        // arguments the model sent that were not a JSON object: kept raw (ai.ToolCall.malformed)
        c.append(h("span", "dnb-badge dnb-failed", "malformed arguments"), h("div", "dnb-muted", args._error));
        c.append(h("pre", "dnb-pre", args._raw));
      } else c.append(h("pre", "dnb-pre", JSON.stringify(args, null, 2)));
      box.append(c);
    } else if (b.type === "thinking") {
      // a model's reasoning: collapsed until asked for
      const d = h("details", "dnb-thinking");
      const text = b.thinking || "";
      const what = text ? `${text.length} chars` : b.redacted ? "redacted by the provider" : "signature only";
      d.append(h("summary", "", `thinking · ${what}`));
      if (text) d.append(h("div", "dnb-text", text));
      box.append(d);
    } else {
      const size = b.bytes !== undefined ? `, ${b.bytes} bytes` : "";
      box.append(h("div", "dnb-attachment", `[${b.type}${b.name ? " " + b.name : ""} ${b.mime_type || ""}${size}] (not displayed)`));
    }
  }
  return box;
}
