/**
 * The page protocol between SessionWidget (Python, durable_nb.widget) and this front end, typed:
 * the synced traits, the requests the page sends (`model.send`) and the replies Python sends back
 * as custom messages. tests/widget/test_protocol.py checks these declarations against the Python
 * side's (durable_nb/widget/protocol.py): a field added on one side and not the other fails it.
 */

/** A tree row: the small dict Python's `row()` draws an entry from (keys with empty values left out). */
export interface Row {
  id: string;
  parent_id: string;
  created_at?: string;
  type: string;
  preview: string;
  /** what the row is: a message's role, `custom · <kind>`, or the entry type (Python's `shown_kind`) */
  what?: string;
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
  tokens?: [number, number];
  cost?: string;
  kind?: string;
  aside?: boolean;
  first_kept_id?: string;
  tokens_before?: number;
  elides?: [string, string, number];
}

export type Mark = "root" | "cont" | "branch" | "eph";

/** One line of the laid-out tree. */
export interface Line {
  row: Row;
  depth: number;
  mark: Mark;
  kids: number;
  on: boolean;
  elided: boolean;
}

/** The `tree` trait: the layout's revision and sizes. */
export interface Tree {
  rev: number;
  lines: number;
  entries: number;
  changed_from: number | null;
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
}

export interface Timing {
  duration_ms?: number;
  ttft_ms?: number;
  total_ms?: number;
}

/** A message as Python's codec encodes it. */
export interface Message {
  role: string;
  content: Block[];
  injected?: string | null;
  origin?: string | null;
  tool_call_id?: string | null;
  tool_name?: string | null;
  is_error?: boolean;
  model?: string | null;
  usage?: Record<string, unknown> | null;
  stop_reason?: string | null;
  settings?: Record<string, unknown> | null;
  timing?: Timing | null;
}

/** A model-view item: a message, with the entry it came from ("" when the view synthesized it). */
export interface ModelItem extends Message {
  entry_id: string;
}

/** A transcript-view item (Python's view entry). */
export interface TranscriptItem {
  id: string;
  type: string;
  text: string;
  /** as Row.what */
  what?: string;
  role?: string;
  kind?: string;
  data?: string;
  blocks?: Block[];
  tool_call_id?: string;
  tool_name?: string;
  is_error?: boolean;
  timing?: Timing;
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
  model: ModelItem[];
  model_total: number;
  transcript: TranscriptItem[];
  transcript_total: number;
  entry: Entry | null;
  /** the details' heading of `entry`: `user message`, `custom entry · <kind>`, `compaction entry` (Python's `entry_title`) */
  title?: string;
  cost?: string;
}

/** A message of a compare side (share/comparison.py's message_state). */
export interface CompareMessage {
  i: number;
  role: string;
  text: string;
  injected?: string | null;
  origin?: string | null;
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
  reply: { text: string } | null;
}

export interface MessageChange {
  op: "changed" | "added" | "removed";
  a: number | null;
  b: number | null;
}

export interface CompareDiff {
  a: number;
  b: number;
  same: number;
  model: [string | null, string | null] | null;
  settings: Record<string, [unknown, unknown]>;
  system: [string | null, string | null] | null;
  messages: MessageChange[];
}

/** The `comparison` trait ({} when nothing is compared). */
export interface Comparison {
  sides?: CompareSide[];
  diffs?: CompareDiff[];
}

export type ViewName = "tree" | "model" | "transcript" | "compare";
export type FilterGroup = "custom" | "aside" | "tool_result";

/** Every synced trait, by name. */
export interface Traits {
  session_id: string;
  tree: Tree;
  leaf_id: string;
  elided: number;
  selected_id: string;
  view: ViewName;
  view_limit: number;
  views: Views;
  error: string;
  labels: Record<string, string>;
  session_cost: string;
  comparison: Comparison;
  hidden: FilterGroup[];
  read_only: string;
}

/** The page's requests (`model.send`), one per action of SessionWidget.ACTIONS. */
export type Request =
  | { action: "lines"; start: number; stop: number }
  | { action: "locate"; id: string }
  | { action: "branch"; id: string }
  | { action: "search"; query: string }
  | { action: "compare"; ids: string[] }
  | { action: "filter"; hide: FilterGroup[] };

export interface LinesReply {
  reply: "lines";
  rev: number;
  start: number;
  total: number;
  lines: Line[];
}

export interface LocateReply {
  reply: "locate";
  id: string;
  rev: number;
  index: number;
  drawn: string;
}

export interface SearchHit {
  id: string;
  index: number;
  drawn: string;
}

export interface SearchReply {
  reply: "search";
  query: string;
  rev: number;
  total: number;
  hits: SearchHit[];
}

export type Reply = LinesReply | LocateReply | SearchReply;

/** anywidget's model, as this front end uses it (typed by trait). */
export interface Model {
  get<K extends keyof Traits>(key: K): Traits[K] | undefined;
  set<K extends keyof Traits>(key: K, value: Traits[K]): void;
  on(event: string, cb: (...args: unknown[]) => void): void;
  off(event?: string, cb?: (...args: unknown[]) => void): void;
  save_changes(): void;
  send(content: Request): void;
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
  if (msg.reply === "search") {
    return typeof msg.query === "string" && typeof msg.total === "number" && Array.isArray(msg.hits)
      ? (msg as unknown as SearchReply)
      : null;
  }
  return null;
}
