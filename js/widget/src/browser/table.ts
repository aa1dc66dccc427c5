/** The session browser's table: its rows' shape, its columns (header, sort key, cell text) and its sort. */


/** One row (durable_nb.digests.Digest.row). Counts are null when unknown (a log not read). */
export interface Row {
  ref: string;
  name: string;
  tool: string;
  entries: number | null;
  turns: number | null;
  branches: number | null;
  models: string[];
  input_tokens: number | null;
  output_tokens: number | null;
  cost: number | null;
  cost_text: string;
  last: string;
  size: number | null;
  read_only: boolean;
  problem: string;
}

export interface BrowserTraits {
  rows: Row[];
  where: string;
  current: string;
  sort: string;
  opened: string;
  status: string;
}

export interface BrowserModel {
  get<K extends keyof BrowserTraits>(key: K): BrowserTraits[K] | undefined;
  set<K extends keyof BrowserTraits>(key: K, value: BrowserTraits[K]): void;
  on(event: string, cb: (...args: unknown[]) => void): void;
  off(event?: string, cb?: (...args: unknown[]) => void): void;
  save_changes(): void;
  send(content: { action: "open"; ref: string }): void;
}

type Key = (r: Row) => number | string | null;

/** The columns: name, header, sort key, cell text, numeric (right-aligned). */
export const COLUMNS: { name: string; title: string; key: Key; text: (r: Row) => string; num?: boolean; tip?: string }[] = [
  { name: "name", title: "session", key: (r) => r.name.toLowerCase(), text: (r) => r.name },
  { name: "entries", title: "entries", key: (r) => r.entries, text: (r) => count(r.entries), num: true },
  { name: "turns", title: "turns", key: (r) => r.turns, text: (r) => count(r.turns), num: true },
  { name: "branches", title: "branches", key: (r) => r.branches, text: (r) => count(r.branches), num: true },
  { name: "models", title: "models", key: (r) => r.models.join(", ").toLowerCase() || null, text: (r) => r.models.join(", ") },
  {
    name: "tokens",
    title: "tokens",
    key: (r) => (r.input_tokens === null ? null : r.input_tokens + (r.output_tokens ?? 0)),
    text: (r) => (r.input_tokens === null || (r.input_tokens === 0 && !r.output_tokens) ? "" : `${count(r.input_tokens)} / ${count(r.output_tokens)}`),
    num: true,
    tip: "input / output tokens of every reply, all branches",
  },
  { name: "cost", title: "cost", key: (r) => r.cost, text: (r) => r.cost_text, num: true, tip: "today's prices; unknown when a reply is unpriced" },
  { name: "last", title: "last activity", key: (r) => r.last || null, text: (r) => when(r.last) },
  { name: "size", title: "size", key: (r) => r.size, text: (r) => (r.size === null ? "" : bytes(r.size)), num: true },
  {
    name: "read_only",
    title: "read-only",
    key: (r) => (r.read_only ? 1 : 0),
    text: (r) => (r.read_only ? (TOOLS[r.tool] ?? r.tool) : ""),
    tip: "a log of another tool, opened read-only (%durable fork NEW continues it here)",
  },
];

const TOOLS: Record<string, string> = { claude_code: "Claude Code", codex: "Codex", pi: "pi", llm: "llm", durable_nb: "durable_nb" };

function count(n: number | null): string {
  return n === null ? "" : n.toLocaleString("en-US");
}

/** "2026-12-01 16:27", the year left out when it is this year's ("12-01 16:27"). */
function when(iso: string): string {
  if (!iso) return "";
  const t = iso.slice(0, 16).replace("T", " ");
  return t.startsWith(`${new Date().getFullYear()}-`) ? t.slice(5) : t;
}

function bytes(n: number): string {
  let size = n;
  for (const unit of ["B", "KB", "MB", "GB"]) {
    if (size < 1000 || unit === "GB") return unit === "B" ? `${size} B` : `${size.toFixed(1)} ${unit}`;
    size /= 1000;
  }
  return `${n} B`;
}

/** `rows` sorted by `sort` ("last", "-cost"...): unknown values last whichever the direction; ties keep their order. */
export function sorted(rows: Row[], sort: string): Row[] {
  const desc = sort.startsWith("-");
  const col = COLUMNS.find((c) => c.name === (desc ? sort.slice(1) : sort)) ?? COLUMNS[7];
  const keyed = rows.map((r, i) => ({ r, i, k: col.key(r) }));
  keyed.sort((a, b) => {
    if (a.k === null || b.k === null) return a.k === b.k ? a.i - b.i : a.k === null ? 1 : -1;
    const c = typeof a.k === "number" && typeof b.k === "number" ? a.k - b.k : String(a.k).localeCompare(String(b.k));
    return (desc ? -c : c) || a.i - b.i;
  });
  return keyed.map((x) => x.r);
}

