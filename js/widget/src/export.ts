/**
 * The exported page's script: a read-only stand-in for anywidget's model, then the widget's own render.
 *
 * durable_nb.share.page inlines this bundle into ONE module script of a self-contained page. The data
 * (every line of the tree as Python laid it out, and the views Python computed at each embedded entry,
 * their items stored once in `items`) is the JSON of <script id="dnb-data">. This stand-in answers the
 * widget's requests ("lines", "locate") from it, marking the active path of the page's leaf. Nothing
 * here computes a layout or a view, fetches anything or writes anywhere: a selection looks the views
 * up. The model is `offline`: the widget offers no kernel action ("Continue from here", compare,
 * find, the kind filter).
 */
import widget from "./index";
import { answerQuery, answerStep, linkedRef, resolveRef, type LineFacts } from "./offline";
import type { Entry, Line, Model, Reply, Request, Row, TimelineReply, Traits, Views } from "./protocol";

/** The embedded views at one entry: [model refs, model total, transcript refs, transcript total, depth, elided, cost]. */
type EmbeddedViews = [number[], number, number[], number, number, number, string];

interface PageData {
  state: Traits;
  items: unknown[];
  lines: Line[];
  views: Record<string, EmbeddedViews>;
  entries: Record<string, Entry & { title?: string }>;
  notes: { missing: string; limit: string };
  shown_leaf?: string; // the entry the leaf badge is on (the leaf stepped up over a label)
  facts?: LineFacts[]; // per line: what the List panel filters and sorts by (listing.facts)
  timeline?: { total: number; turns: TimelineReply["turns"] };
}

type Listener = (...args: unknown[]) => void;

function standIn(data: PageData): Model {
  const state = data.state;
  const items = data.items;
  const lines = data.lines;
  const listeners = new Map<string, Set<Listener>>();
  const index = new Map<string, number>();
  const rows = new Map<string, Row>();
  lines.forEach((l, i) => {
    if (l.row.id && !index.has(l.row.id)) index.set(l.row.id, i);
    if (l.row.id) rows.set(l.row.id, l.row);
  });
  let active: { leaf: string; at: Map<string, number> } = { leaf: "\u0000", at: new Map() };
  const shown = data.shown_leaf ?? state.leaf_id; // where the leaf badge is (never a label: it is no line)
  const leaf = () => shown;

  /** The active path of the page's leaf: id -> place from the root (cycle-safe). */
  function activePath(): Map<string, number> {
    if (active.leaf === leaf()) return active.at;
    const ids: string[] = [];
    let cur = rows.get(leaf());
    while (cur && !ids.includes(cur.id)) {
      ids.push(cur.id);
      cur = cur.parent_id ? rows.get(cur.parent_id) : undefined;
    }
    ids.reverse();
    active = { leaf: leaf(), at: new Map(ids.map((id, k) => [id, k])) };
    return active.at;
  }
  /** A line, marked for the page's leaf. */
  function mark(l: Line): Line {
    if (!l.row.id) return l;
    const k = activePath().get(l.row.id);
    return { ...l, on: k !== undefined, elided: k !== undefined && k < (state.elided || 0) };
  }
  /** Answer like the kernel does: later, as a custom message. */
  function reply(content: Reply): void {
    setTimeout(() => {
      for (const cb of [...(listeners.get("msg:custom") || [])]) cb(content, []);
    }, 0);
  }
  const fire = (key: string) => {
    for (const cb of [...(listeners.get(`change:${key}`) || [])]) cb();
  };
  state.tree = { ...state.tree };

  /** The `views` value at entry `at`, as SessionWidget would send it (at most `limit` items of each view). */
  function viewsAt(at: string, following: boolean, limit: number): Views {
    const v = data.views[at];
    const entry = data.entries[at] || null;
    const title = entry?.title || "";
    if (!v) return { at, following_leaf: following, depth: 0, model: [], model_total: 0, transcript: [], transcript_total: 0, entry, title, cost: "" };
    const [model, modelTotal, transcript, transcriptTotal, depth, , cost] = v;
    const take = <T>(refs: number[]) => refs.slice(-Math.max(1, limit)).map((i) => items[i] as T);
    return { at, following_leaf: following, depth, model: take(model), model_total: modelTotal, transcript: take(transcript), transcript_total: transcriptTotal, entry, title, cost: cost || "" };
  }

  function update(): void {
    const at = state.selected_id || leaf();
    state.views = viewsAt(at, !state.selected_id, state.view_limit);
    const v = data.views[at];
    state.error = !at
      ? ""
      : !v
        ? data.notes.missing.replace("{id}", at.slice(0, 8))
        : state.view_limit > v[0].length && (v[1] > v[0].length || v[3] > v[2].length)
          ? data.notes.limit
          : "";
    fire("views");
    fire("error");
  }

  function send(msg: Request): void {
    if (msg.action === "lines") {
      const start = Math.max(0, Number(msg.start) || 0);
      const stop = Math.min(Number(msg.stop) || 0, start + 400);
      return reply({ reply: "lines", rev: state.tree.rev, start, total: lines.length, lines: lines.slice(start, stop).map(mark) });
    }
    if (msg.action === "locate") {
      const i = index.get(String(msg.id));
      return reply({ reply: "locate", id: msg.id, rev: state.tree.rev, index: i ?? -1, drawn: i === undefined ? "" : msg.id });
    }
    if (msg.action === "views") return reply({ reply: "views", rev: state.tree.rev, seq: 0, base: -1, views: { ...state.views } });
    if (msg.action === "query") return reply(answerQuery(msg, lines, data.facts || [], mark, state.tree.rev));
    if (msg.action === "step") return reply(answerStep(msg, lines, index, state.tree.rev));
    if (msg.action === "timeline") return reply({ reply: "timeline", rev: state.tree.rev, start: 0, base: -1, seq: 0, view: msg.view || "", ...(data.timeline || { total: 0, turns: [] }) });
  }

  // a deep link (#entry=ID, a label or 4+ characters of an id) opens the page with that entry selected
  const ref = typeof location !== "undefined" ? linkedRef(location.hash) : null;
  let linkNote = "";
  if (ref !== null) {
    const [id, why] = resolveRef(ref, Object.keys(data.entries), state.labels || {});
    if (id) Object.assign(state, { selected_id: id, view: "tree" }); // opened there, in the tree
    else linkNote = `the link's #entry=${ref} ${why}: the page opens at the leaf`;
  }
  update();
  if (linkNote) state.error = linkNote; // said until the next selection
  const model: Model = {
    get: (key) => state[key],
    set: (key, value) => {
      if (state[key] === value) return;
      state[key] = value;
      fire(key);
      if (key === "selected_id" || key === "view_limit") update();
    },
    on: (ev, cb) => {
      if (!listeners.has(ev)) listeners.set(ev, new Set());
      (listeners.get(ev) as Set<Listener>).add(cb);
    },
    off: (ev, cb) => {
      if (ev && cb) listeners.get(ev)?.delete(cb);
      else if (ev) listeners.delete(ev);
      else listeners.clear();
    },
    save_changes: () => {},
    send,
    offline: true,
  };
  return model;
}

const t0 = performance.now(); // first paint is timed from here (the data parsed, the tree drawn, two frames)
const data = JSON.parse((document.getElementById("dnb-data") as HTMLElement).textContent || "{}") as PageData;
const root = document.getElementById("dnb-root") as HTMLElement;
let unmount = widget.render({ model: standIn(data), el: root });
// following a new #entry= link within the page opens the widget again at that entry
window.addEventListener("hashchange", () => {
  if (linkedRef(location.hash) === null) return;
  unmount();
  root.replaceChildren();
  unmount = widget.render({ model: standIn(data), el: root });
});
requestAnimationFrame(() =>
  requestAnimationFrame(() => {
    (window as unknown as { __dnbFirstPaintMs: number }).__dnbFirstPaintMs = performance.now() - t0; // read by benchmarks/export_bench.py
  }),
);
