/**
 * Keyboard navigation, listed in a help popover (the "Keys" button, or "?"): the next / previous entry,
 * turn, branch point and find match. Python steps through the drawn order ({action: "step"}), so a
 * turn far below the window is found without fetching the lines between; the tree then scrolls there
 * and selects it. Keys are read while the focus is in the widget and not in a text field.
 */
import type { Ctx } from "./context";
import { button, h } from "./dom";
import { openInTree } from "./panels/list";
import { asReply, type StepWhat } from "./protocol";

export const KEYS: [string, string][] = [
  ["j / ↓", "next entry"],
  ["k / ↑", "previous entry"],
  ["n", "next turn"],
  ["p", "previous turn"],
  ["b", "next branch point"],
  ["B", "previous branch point"],
  ["m", "next find match"],
  ["M", "previous find match"],
  ["?", "this help"],
  ["Esc", "close it"],
];

const STEP: Record<string, [StepWhat, number]> = { j: ["entry", 1], k: ["entry", -1], n: ["turn", 1], p: ["turn", -1], b: ["branch", 1], B: ["branch", -1] };

export interface Keys {
  el: HTMLElement;
  dispose(): void;
}

export function keyboard(ctx: Ctx): Keys {
  const { model } = ctx;
  const el = h("div", "dnb-keys");
  const help = h("div", "dnb-keys-help");
  help.hidden = true;
  help.setAttribute("role", "dialog");
  help.setAttribute("aria-label", "keyboard shortcuts");
  const table = h("dl", "dnb-kv");
  for (const [k, what] of KEYS) table.append(h("dt", "", k), h("dd", "", what));
  help.append(h("strong", "", "Keys"), table);
  const toggle = button("dnb-action dnb-keys-button", "Keys ?", () => show(help.hidden));
  toggle.title = "Keyboard shortcuts (?)";
  toggle.setAttribute("aria-expanded", "false");
  el.append(toggle, help);
  let asked = 0;

  function show(on: boolean): void {
    help.hidden = !on;
    toggle.setAttribute("aria-expanded", String(on));
  }

  function stepTo(what: StepWhat, dir: number): void {
    if (ctx.kernel.staleReason()) return;
    asked += 1;
    model.send({ action: "step", id: ctx.selected() || ctx.leaf(), what, dir });
  }

  /** The next (dir 1) or previous find match, as the find's own buttons go. */
  function match(dir: number): void {
    const f = ctx.found;
    if (!f.hits.length) return;
    f.at = (((f.at + dir) % f.hits.length) + f.hits.length) % f.hits.length;
    const hit = f.hits[f.at];
    openInTree(ctx, hit.id, hit.index >= 0 && hit.drawn === hit.id ? hit.index : -1);
    ctx.hooks.drawFind();
  }

  function onKey(ev: KeyboardEvent): void {
    const t = ev.target as HTMLElement | null;
    if (ev.ctrlKey || ev.metaKey || ev.altKey || (t && (t.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(t.tagName)))) return;
    const key = ev.key === "ArrowDown" ? "j" : ev.key === "ArrowUp" ? "k" : ev.key;
    if (key === "?") show(help.hidden);
    else if (key === "Escape") show(false);
    else if (key === "m" || key === "M") match(key === "m" ? 1 : -1);
    else if (STEP[key] && !(t && t.classList.contains("dnb-scroll") && (ev.key === "ArrowDown" || ev.key === "ArrowUp"))) stepTo(...STEP[key]);
    else return;
    ev.preventDefault();
  }

  const onCustom = (msg: unknown) => {
    const r = asReply(msg);
    if (r?.reply !== "step" || !asked || r.rev !== ctx.tree.rev) return;
    asked -= 1;
    if (r.id) openInTree(ctx, r.id, r.index);
  };
  ctx.root.addEventListener("keydown", onKey);
  model.on("msg:custom", onCustom);
  return {
    el,
    dispose() {
      ctx.root.removeEventListener("keydown", onKey);
      model.off("msg:custom", onCustom);
    },
  };
}
