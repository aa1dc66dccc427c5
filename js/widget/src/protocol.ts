/**
 * The page protocol between SessionWidget (Python, durable_nb.widget) and this front end, typed:
 * the synced traits, the requests the page sends (`model.send`) and the replies Python sends back
 * as custom messages. tests/widget/test_protocol_ts.py checks these declarations against the Python
 * side's (durable_nb/widget/protocol.py): a field added on one side and not the other fails it.
 */

/** A tree row: the small dict Python's `row()` draws an entry from (keys with empty values left out). */
export interface Row {
  id: string;
  parent_id: string;
  created_at?: string;
  type: RowType;
  preview: string;
  /** what the row is: a message's role, `custom · <kind>`, or the entry type (Python's `shown_kind`) */
  what: string;
  /** an ordinary user message: it starts a turn (Python's is_turn_start) */
  turn?: boolean;
  role?: string;
  injected?: string;
  origin?: string;
  tools?: string[];
  bad_arguments?: number;
  thinking?: number;
  reminders?: number;
  attachments?: string[];
  tool_call_id?: string;
  is_error?: boolean;
  duration_ms?: number;
  tokens?: number[]; // [input, output]
  cost?: string;
  kind?: string;
  aside?: boolean;
  first_kept_id?: string;
  tokens_before?: number;
  elides?: [string, string, number]; // [first id, last id, count]
}

export type Action = "lines" | "locate" | "branch" | "search" | "compare" | "filter" | "views" | "query" | "step" | "timeline" | "fallback" | "module";
export type ReplyName = "lines" | "locate" | "search" | "views" | "query" | "step" | "timeline" | "fallback" | "module";
/** the tab the page shows */
export type View = "tree" | "model" | "transcript" | "compare" | "grid" | "list";
/** how the flat list is ordered */
export type SortKey = "tree" | "time" | "cost" | "tokens";
/** what the keyboard steps to */
export type StepWhat = "entry" | "turn" | "branch";
/** how a line hangs off the line above it */
export type Mark = "root" | "cont" | "branch" | "eph";
export type RowType = "message" | "compaction" | "custom" | "start";
/** the kind groups the tree can hide */
export type FilterGroup = "custom" | "aside" | "tool_result";
/** a grid cell against its baseline */
export type GridMark = "regressed" | "improved" | "changed";

/** A chip on a line: the latest verdict of a run's grader, or annotation of an author (`count` written). */
export interface Chip {
  kind: string;
  key: string;
  id: string;
  count: number;
  by?: string;
  at?: string;
  score?: number;
  tags?: string[];
  note?: string;
  run?: string;
  grader?: string;
  passed?: boolean;
  reason?: string;
  error?: string;
}

/** One line of the laid-out tree. */
export interface Line {
  row: Row;
  depth: number;
  mark: Mark;
  /** its lanes, outermost first (Layout.rails): true = a lane runs on past it */
  rails: boolean[];
  kids: number;
  on: boolean;
  elided: boolean;
  chips?: Chip[];
}

/** The `tree` trait: the layout's revision and sizes. */
export interface Tree {
  rev: number;
  lines: number;
  entries: number;
  changed_from: number;
  leaf_line: number;
}

/** A content block as Python's codec encodes it (blobs elided). */
export interface Block {
  type: string;
  text?: string;
  name?: string;
  id?: string;
  arguments?: Record<string, unknown>;
  thinking?: string;
  redacted?: boolean;
  mime_type?: string;
  bytes?: number;
  mcp?: Record<string, unknown>; // a tool call's MCP server (durable.mcp_tools)
}

export interface Timing {
  duration_ms?: number;
  ttft_ms?: number;
  total_ms?: number;
}

/** A message as Python's codec encodes it (the log's encoding: empty fields left out). */
export interface Message {
  role: string;
  content: Block[];
  injected?: string;
  origin?: string;
  tool_call_id?: string;
  tool_name?: string;
  is_error?: boolean;
  usage?: Record<string, unknown>;
  stop_reason?: string;
  model?: string;
  settings?: Record<string, unknown>;
  timing?: Timing;
  ephemeral_context?: string[];
  api?: string;
  provider?: string;
  error?: string;
  timestamp?: string;
  mcp?: Record<string, unknown>; // a tool result's MCP provenance (server, version, command or url, duration_ms, approval)
  reused?: string; // a result answered from stored results: the entry it copies ("" none)
}

/** A model-view item: a message, with the entry it came from ("" when the view synthesized it). */
export interface ViewMessage extends Message {
  entry_id: string;
}

/** A transcript-view item (Python's view entry). */
export interface ViewEntry {
  id: string;
  type: RowType;
  text: string;
  /** as Row.what */
  what: string;
  role?: string;
  blocks?: Block[]; // tool calls and thinking
  tool_call_id?: string;
  tool_name?: string;
  is_error?: boolean;
  timing?: Timing;
  kind?: string;
  readable?: boolean; // text is the kind's own reading (durable_nb.kinds.text)
  data?: string; // a custom entry's data as JSON, cut
}

/** The full entry at the views' entry (codec encoding, blobs elided). */
export interface Entry {
  id: string;
  parent_id: string;
  type: string;
  created_at?: string;
  message?: Message;
  kind?: string;
  data?: unknown;
  summary?: string;
  first_kept_id?: string;
  tokens_before?: number;
}

/** The `views` trait: both views and the full entry at one entry. */
export interface Views {
  at: string;
  following_leaf: boolean;
  depth: number;
  model: ViewMessage[];
  model_total: number;
  transcript: ViewEntry[];
  transcript_total: number;
  entry: Entry | null;
  /** the details' heading of `entry`: `user message`, `custom entry · <kind>`, `compaction entry` (Python's `entry_title`) */
  title: string;
  /** tokens and cost of the path's replies ("" for none) */
  cost: string;
}

/** A message of a compare side (share/comparison.py's message_state). */
export interface CompareMessage {
  i?: number; // its index in the request (a reply has none)
  role: string;
  text: string;
  injected?: string;
  origin?: string;
  tool_call_id?: string;
  is_error?: boolean;
}

/** Tokens and cost of a reply or a branch (share/comparison.py's tally state). */
export interface TallyState {
  input_tokens: number;
  output_tokens: number;
  reported: number;
  cost: string;
  summary: string;
}

export interface CompareSide {
  ref: string;
  entry_id: string;
  reply_id: string;
  created_at: string;
  labels: string[];
  model: string | null;
  settings: Record<string, unknown>;
  cost: TallyState | null;
  branch_cost: TallyState;
  total_ms: number | null;
  message_total: number;
  system: string | null;
  messages: CompareMessage[];
  reply: CompareMessage | null;
}

export interface Change {
  op: string; // "changed", "added" or "removed"
  a: number | null;
  b: number | null;
}

export interface Diff {
  a: number;
  b: number;
  same: number; // messages the same
  messages: Change[];
  system: (string | null)[] | null; // [a's, b's]
  model: (string | null)[] | null;
  settings: Record<string, unknown[]>;
}

/** The `comparison` trait ({} when nothing is compared). */
export interface Comparison {
  sides: CompareSide[];
  diffs: Diff[];
}

/** One grader's verdict in a grid cell. */
export interface GridVerdict {
  grader: string;
  passed: boolean;
  score?: number;
  reason?: string;
  error?: string;
}

/** One case × variant pair of the grid (`variant`: its column). */
export interface GridCell {
  case: number;
  variant: number;
  passed: boolean;
  entry_id: string; // the reply's entry ("" when none): a click opens it
  reply: string;
  verdicts: GridVerdict[];
  cost: string;
  ms: number | null;
  tokens: number | null;
  score?: number; // the mean of its graders' scores
  error?: string;
  baseline?: GridMark; // against the baseline run (left out: the same)
}

export interface GridCase {
  index: number;
  label: string;
}

/** The `evaluation` trait ({} when none): evals/grid.py's state, cases × variants. */
export interface EvalGrid {
  run: string;
  baseline: string;
  finished: boolean;
  variants: string[];
  graders: string[];
  cases: GridCase[];
  case_total: number;
  cells: GridCell[];
  summary: string;
}

/** Every synced trait, by name. */
export interface Traits {
  session_id: string;
  tree: Tree;
  leaf_id: string;
  elided: number;
  selected_id: string;
  view: View;
  view_limit: number;
  views: Views;
  /** which `views` value it is (a "views" reply names the one it changes) */
  views_rev: number;
  error: string;
  labels: Record<string, string>;
  session_cost: string;
  comparison: Comparison | Record<string, never>; // {}: none
  hidden: FilterGroup[];
  read_only: string;
  evaluation: EvalGrid | Record<string, never>; // {}: none
}

// -- the page's requests (`model.send`), one per action of SessionWidget.ACTIONS --

export interface LinesRequest {
  action: "lines";
  start: number;
  stop: number;
}

export interface LocateRequest {
  action: "locate";
  id: string;
}

export interface BranchRequest {
  action: "branch";
  id: string;
}

export interface SearchRequest {
  action: "search";
  query: string;
}

export interface CompareRequest {
  action: "compare";
  ids: string[];
}

export interface FilterRequest {
  action: "filter";
  hide: FilterGroup[];
}

export interface ViewsRequest {
  action: "views";
}

/** What the flat list keeps: every field given must hold. */
export interface Filter {
  role?: string;
  kind?: string;
  model?: string;
  tool?: string;
  tag?: string;
  error?: boolean;
  min_score?: number;
  max_score?: number;
  on_path?: boolean;
}

export interface QueryRequest {
  action: "query";
  query: Filter;
  sort: SortKey;
  start: number;
  seq: number;
}

export interface StepRequest {
  action: "step";
  id: string;
  what: StepWhat;
  dir: number;
}

export interface TimelineRequest {
  action: "timeline";
  have?: number;
  /** the asking view's id: a widget shown twice keeps a timeline per view */
  view?: string;
}

export interface FallbackRequest {
  action: "fallback";
}
/** asked by the loader (durable_nb/widget/module.py), which is plain JavaScript: declared for the twin's check */
export interface ModuleRequest {
  action: "module";
}

export type Request = LinesRequest | LocateRequest | BranchRequest | SearchRequest | CompareRequest | FilterRequest | ViewsRequest | QueryRequest | StepRequest | TimelineRequest | FallbackRequest | ModuleRequest;

// -- Python's replies (custom messages) --

export interface LinesReply {
  reply: "lines";
  rev: number;
  start: number;
  total: number;
  lines: Line[];
  /** a push: `lines` skip [lo, hi), lines that did not change, which the page keeps at rev's tree update */
  kept?: number[];
}

export interface LocateReply {
  reply: "locate";
  id: string;
  rev: number;
  index: number;
  drawn: string;
}

export interface Hit {
  id: string;
  index: number;
  drawn: string;
}

export interface SearchReply {
  reply: "search";
  query: string;
  rev: number;
  total: number;
  hits: Hit[];
}

/** How a view's item list changes: keep `keep` items from `drop` on, put before them `head` and the
 * last `back` items the list's previous delta dropped, then append `add`. */
export interface ListDelta {
  drop: number;
  keep: number;
  add: unknown[];
  head?: unknown[];
  back?: number;
}

/** `views` at revision `seq`, from revision `base` (-1: `views` is the whole value); a part left out is stale. */
export interface ViewsReply {
  reply: "views";
  rev: number;
  seq: number;
  base: number;
  views: Record<string, unknown>;
  model?: ListDelta;
  transcript?: ListDelta;
}

export interface Facets {
  role: string[];
  kind: string[];
  model: string[];
  tool: string[];
  tag: string[];
}

/** An entry of the flat list, and the line drawing it (-1 / "": none). */
export interface ListItem {
  id: string;
  index: number;
  drawn: string;
  row: Row;
  chips: Chip[];
  on: boolean;
}

export interface QueryReply {
  reply: "query";
  rev: number;
  seq: number;
  sort: SortKey;
  total: number;
  start: number;
  items: ListItem[];
  facets: Facets;
}

export interface StepReply {
  reply: "step";
  rev: number;
  what: StepWhat;
  id: string;
  index: number;
}

/** A bar of the timeline: a turn (or n consecutive ones), its replies' cost (null: unknown) and tokens. */
export interface Turn {
  id: string;
  at: string;
  cost: number | null;
  tokens: number;
  n: number;
  on: boolean;
}

export interface TimelineReply {
  reply: "timeline";
  rev: number;
  total: number;
  turns: Turn[];
  start: number;
  base: number;
  seq: number;
  /** the request's ("": none named): every view of the widget receives the reply, the others skip it */
  view: string;
}

export interface FallbackReply {
  reply: "fallback";
  rev: number;
  html: string; // the output's text/html
  text: string; // the output's text/plain
}
export interface ModuleReply {
  reply: "module";
  esm: string;
}

export type Reply = LinesReply | LocateReply | SearchReply | ViewsReply | QueryReply | StepReply | TimelineReply | FallbackReply | ModuleReply;

/** anywidget's model, as this front end uses it (typed by trait). */
export interface Model {
  get<K extends keyof Traits>(key: K): Traits[K] | undefined;
  set<K extends keyof Traits>(key: K, value: Traits[K]): void;
  on(event: string, cb: (...args: unknown[]) => void): void;
  off(event?: string, cb?: (...args: unknown[]) => void): void;
  save_changes(): void;
  send(content: Request): void;
  /** true for a stand-in with no kernel behind it (the exported page): no kernel action is offered */
  offline?: boolean;
}

const isObject = (x: unknown): x is Record<string, unknown> => typeof x === "object" && x !== null;

/** Whether `msg` (a custom message from Python) is a well-formed reply this page reads. */
export function asReply(msg: unknown): Reply | null {
  if (!isObject(msg) || typeof msg.rev !== "number") return null;
  if (msg.reply === "lines") {
    return typeof msg.start === "number" && Array.isArray(msg.lines) ? (msg as unknown as LinesReply) : null;
  }
  if (msg.reply === "locate") {
    return typeof msg.id === "string" && typeof msg.index === "number" ? (msg as unknown as LocateReply) : null;
  }
  if (msg.reply === "views") {
    return typeof msg.seq === "number" && typeof msg.base === "number" && isObject(msg.views) ? (msg as unknown as ViewsReply) : null;
  }
  if (msg.reply === "fallback") {
    return typeof msg.html === "string" && typeof msg.text === "string" ? (msg as unknown as FallbackReply) : null;
  }
  if (msg.reply === "search") {
    return typeof msg.query === "string" && typeof msg.total === "number" && Array.isArray(msg.hits)
      ? (msg as unknown as SearchReply)
      : null;
  }
  if (msg.reply === "query") {
    return typeof msg.seq === "number" && typeof msg.total === "number" && Array.isArray(msg.items) && isObject(msg.facets)
      ? (msg as unknown as QueryReply)
      : null;
  }
  if (msg.reply === "step") return typeof msg.id === "string" && typeof msg.index === "number" ? (msg as unknown as StepReply) : null;
  if (msg.reply === "timeline") return Array.isArray(msg.turns) ? (msg as unknown as TimelineReply) : null;
  return null;
}
