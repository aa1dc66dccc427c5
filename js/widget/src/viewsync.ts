/**
 * The `views` the page draws: Python's `views` trait, kept current by the "views" replies a sync
 * sends once the page is drawn (durable_nb/widget/views_delta.py, its Python twin). A reply carries
 * the small fields and only the parts the shown tab draws (SHOWN); a part left out is stale here
 * until the page shows it and asks for the whole value (`{"action": "views"}`). One state per drawn
 * view: a view drawn late from a model whose `views` is behind its leaf asks for the whole value.
 * Nothing here computes a view: it keeps, drops and appends the items Python sent. O(items) per reply.
 */
import type { ListDelta, Model, View, Views, ViewsReply } from "./protocol";
import { asReply } from "./protocol";
import type { Kernel } from "./kernel";

type Part = "entry" | "model" | "transcript";
/** the part of `views` each tab draws (Python's views_delta.SHOWN) */
const SHOWN: Partial<Record<View, Part>> = { tree: "entry", model: "model", transcript: "transcript" };
const PARTS: Part[] = ["entry", "model", "transcript"];

/** The list `d` makes of `list`; `gone`: the items the list's previous delta dropped (null: unknown). */
function applied(list: unknown[] | undefined, d: ListDelta, gone: unknown[] | null): unknown[] | null {
  const back = d.back || 0;
  if (back && (!gone || gone.length < back)) return null;
  const kept = (list || []).slice(d.drop, d.drop + d.keep);
  return [...(d.head || []), ...(back && gone ? gone.slice(gone.length - back) : []), ...kept, ...d.add];
}

export class SyncedViews {
  private value: Partial<Views> = {};
  private seq = 0;
  private seen: unknown = undefined; // the model's `views` value last taken
  private readonly stale = new Set<Part>();
  // per view list, the items the last delta of it dropped from the front (views_delta.Sent's twin)
  private gone: Partial<Record<Part, unknown[]>> = {};
  private asked = false;
  private readonly listeners = new Set<() => void>();

  private readonly onCustom = (msg: unknown) => this.onReply(msg);

  constructor(private readonly model: Model) {
    const v = this.current();
    // drawn after replies it did not get (another view of the widget got them): all of it is behind
    if (v.following_leaf && v.at && v.at !== model.get("leaf_id")) for (const p of PARTS) this.stale.add(p);
    model.on("msg:custom", this.onCustom);
  }

  dispose(): void {
    this.model.off("msg:custom", this.onCustom);
    this.listeners.clear();
  }

  /** The views to draw: the model's `views` when Python sent a new one whole, else as the replies made it. */
  current(): Partial<Views> {
    const mv = this.model.get("views");
    if (mv !== this.seen) {
      this.seen = mv;
      this.value = mv || {};
      this.seq = this.model.get("views_rev") || 0;
      this.stale.clear();
      this.gone = {};
      // a widget's first state carries only the shown tab's part (views_delta.opening): the rest is stale
      for (const p of ["model", "transcript"] as const) if (mv && !(p in mv)) this.stale.add(p);
      this.asked = false;
    }
    return this.value;
  }

  /** Call `cb` after a reply changed the views; returns the unsubscribe. */
  subscribe(cb: () => void): () => void {
    this.listeners.add(cb);
    return () => this.listeners.delete(cb);
  }

  /** Ask for the whole value when the tab `view` draws a part held stale (once until it comes). */
  want(view: View | undefined, kernel: Kernel): void {
    const part = view ? SHOWN[view] : undefined;
    this.current();
    if (!part || !this.stale.has(part) || this.asked) return;
    if (!kernel.request("views", () => !this.stale.has(part))) return;
    this.asked = true;
    this.model.send({ action: "views" });
  }

  private onReply(msg: unknown): void {
    const r = asReply(msg);
    if (!r || r.reply !== "views") return;
    this.current();
    this.apply(r);
    // Redraw once the update message that follows (the new leaf) is in too.
    const later = typeof requestAnimationFrame === "function" ? requestAnimationFrame : (cb: () => void) => setTimeout(cb, 0);
    later(() => {
      for (const cb of [...this.listeners]) cb();
    });
  }

  private apply(r: ViewsReply): void {
    const v = r.views as Partial<Views>;
    const gone = this.gone;
    this.gone = {};
    if (r.base < 0) {
      this.value = v;
      this.stale.clear();
      this.asked = false;
    } else {
      const next: Partial<Views> = { ...this.value, ...v };
      const base = r.base === this.seq;
      for (const part of PARTS) {
        const carried = part === "entry" ? "entry" in v : r[part] !== undefined;
        if (!carried || (!base && part !== "entry")) this.stale.add(part);
        else if (part === "entry") this.stale.delete(part);
        else if (!this.stale.has(part)) {
          const d = r[part] as ListDelta;
          const list = applied(this.value[part], d, gone[part] || null);
          if (list === null) this.stale.add(part); // it names items this page does not hold: ask for all
          else {
            next[part] = list as never;
            if (d.keep) this.gone[part] = (this.value[part] || []).slice(0, d.drop);
          }
        }
      }
      this.value = next;
    }
    this.seq = r.seq;
  }
}
