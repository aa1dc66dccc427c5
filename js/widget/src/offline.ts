/**
 * The exported page's answers to the List panel, the keys and the timeline, from the page's own data:
 * what durable_nb.widget.listing answers in the kernel, over the facts Python embedded per line
 * (listing.facts) and the timeline it computed. The filter rule is listing.matches, read the same way:
 * every field given must hold. No DOM.
 */
import type { Chip, Facets, Filter, Line, ListItem, QueryRequest, QueryReply, StepRequest, StepReply } from "./protocol";

/** listing.facts of one line (empty fields left out). */
export interface LineFacts {
  role?: string;
  kind?: string;
  model?: string;
  tools?: string[];
  error?: boolean;
  tags?: string[];
  scores?: number[];
  at?: string;
  cost?: number;
  tokens?: number;
}

const MAX_ITEMS = 200;

/** Whether a line with facts `f` passes filter `q` (listing.matches). */
export function matches(f: LineFacts, q: Filter, on: boolean): boolean {
  for (const k of ["role", "kind", "model"] as const) if (q[k] && (f[k] || "") !== q[k]) return false;
  if (q.tool && !(f.tools || []).includes(q.tool)) return false;
  if (q.tag && !(f.tags || []).includes(q.tag)) return false;
  if (q.error && !f.error) return false;
  if (q.on_path && !on) return false;
  const lo = q.min_score;
  const hi = q.max_score;
  if (lo !== undefined || hi !== undefined) {
    if (!(f.scores || []).some((s) => (lo === undefined || s >= lo) && (hi === undefined || s <= hi))) return false;
  }
  return true;
}

/** The query's reply over the page's lines (`mark` gives a line with `on` for the page's leaf). */
export function answerQuery(req: QueryRequest, lines: Line[], facts: LineFacts[], mark: (l: Line) => Line, rev: number): QueryReply {
  const facet: Record<keyof Facets, Set<string>> = { role: new Set(), kind: new Set(), model: new Set(), tool: new Set(), tag: new Set() };
  const hits: [number, Line][] = [];
  lines.forEach((raw, i) => {
    if (!raw.row.id) return;
    const f = facts[i] || {};
    for (const k of ["role", "kind", "model"] as const) if (f[k]) facet[k].add(f[k] as string);
    for (const t of f.tools || []) facet.tool.add(t);
    for (const t of f.tags || []) facet.tag.add(t);
    const l = mark(raw);
    if (matches(f, req.query || {}, l.on)) hits.push([i, l]);
  });
  const key = (i: number): [number, number] => {
    const f = facts[i] || {};
    if (req.sort === "time") return [0, Date.parse(f.at || "") || 0];
    if (req.sort === "cost") return f.cost === undefined ? [1, 0] : [0, -f.cost];
    if (req.sort === "tokens") return f.tokens ? [0, -f.tokens] : [1, 0];
    return [0, i];
  };
  hits.sort((a, b) => {
    const [x, y] = [key(a[0]), key(b[0])];
    return x[0] - y[0] || x[1] - y[1] || a[0] - b[0];
  });
  const start = Math.max(0, Number(req.start) || 0);
  const items: ListItem[] = hits.slice(start, start + MAX_ITEMS).map(([i, l]) => ({ id: l.row.id, index: i, drawn: l.row.id, row: l.row, chips: (l.chips || []) as Chip[], on: l.on }));
  const facets = Object.fromEntries(Object.entries(facet).map(([k, v]) => [k, [...v].sort()])) as unknown as Facets;
  return { reply: "query", rev, seq: req.seq, sort: req.sort, total: hits.length, start, items, facets };
}

/** The step's reply: the next / previous line that is an entry, a turn start or a branch point. */
export function answerStep(req: StepRequest, lines: Line[], index: Map<string, number>, rev: number): StepReply {
  const d = req.dir > 0 ? 1 : -1;
  const at = index.get(req.id) ?? -1;
  for (let i = at >= 0 || d > 0 ? at + d : lines.length - 1; i >= 0 && i < lines.length; i += d) {
    const l = lines[i];
    if (!l.row.id) continue;
    if (req.what === "entry" || (req.what === "turn" && l.row.turn) || (req.what === "branch" && l.kids > 1)) {
      return { reply: "step", rev, what: req.what, id: l.row.id, index: i };
    }
  }
  return { reply: "step", rev, what: req.what, id: "", index: -1 };
}

/**
 * The entry a deep link's `#entry=REF` names, as labels.resolve reads a reference: an exact id, a label,
 * or a unique id prefix of at least 4 characters. Returns [id, ""] or ["", why it names nothing].
 */
export function resolveRef(ref: string, ids: string[], labels: Record<string, string>): [string, string] {
  if (!ref) return ["", "names no entry"];
  if (ids.includes(ref)) return [ref, ""];
  if (ref in labels && ids.includes(labels[ref])) return [labels[ref], ""];
  const hits = ref.length >= 4 ? ids.filter((i) => i.startsWith(ref)) : [];
  if (hits.length === 1) return [hits[0], ""];
  if (hits.length) return ["", `starts ${hits.length} entry ids: give more characters`];
  return ["", ref.length < 4 && ids.some((i) => i.startsWith(ref)) ? "is too short: give at least 4 characters of an id" : "names no entry, label or id prefix of this page"];
}

/** The REF of a `#entry=REF` fragment (decoded), or null when the fragment is not a deep link. */
export function linkedRef(hash: string): string | null {
  const m = /^#?entry=(.*)$/.exec(hash || "");
  if (!m) return null;
  try {
    return decodeURIComponent(m[1]).trim();
  } catch {
    return m[1].trim();
  }
}
