// @ts-check
// durable_nb entry-tree widget: the front end of durable_nb.widget.SessionWidget.
//
// Python lays the tree out (durable_nb.layout) and syncs only small state:
// `tree` ({rev, lines, entries, changed_from, leaf_line}), `leaf_id`, `elided`,
// `views` (the model view, transcript view and full entry at the selected
// entry, all computed in Python). This module fetches the lines it draws (plus a
// margin) with {action: "lines", start, stop} and finds any entry's line with
// {action: "locate", id}; Python answers with custom messages {reply, rev, ...}
// (the protocol is in durable_nb/widget.py's module doc). A sync pushes the new
// lines near the leaf just before the `tree` update that announces them. This
// module never computes a layout or a view and never writes the store:
// "continue from here" sends {action: "branch", id}. Find sends {action: "search",
// query} (Python searches every branch and answers with the hits in drawn order);
// the kind filter {action: "filter", hide}; "Compare" {action: "compare", ids}
// (Python sets the `comparison` trait, drawn by drawCompare).
//
// Safety: every piece of entry text goes into the DOM through textContent.
// Nothing here uses innerHTML, creates <img>, or follows a URL from the data.

/**
 * @typedef {{
 *   id: string, parent_id: string, created_at?: string, type: string, preview: string,
 *   role?: string, injected?: string, origin?: string, tools?: string[], reminders?: number,
 *   attachments?: string[], tool_call_id?: string, is_error?: boolean, kind?: string,
 *   thinking?: number, bad_arguments?: number, duration_ms?: number,
 *   first_kept_id?: string, tokens_before?: number, elides?: [string, string, number],
 *   tokens?: [number, number], cost?: string
 * }} Row
 * @typedef {{ row: Row, depth: number, mark: "root" | "cont" | "branch" | "eph", kids: number, on: boolean, elided: boolean }} Line
 * @typedef {{ rev: number, lines: number, entries: number, changed_from: number | null, leaf_line: number }} Tree
 * @typedef {{
 *   get: (key: string) => any, set: (key: string, value: any) => void,
 *   on: (event: string, cb: Function) => void, off: (event?: string, cb?: Function) => void,
 *   save_changes: () => void, send: (content: any) => void
 * }} Model
 */

const ROW_H = 26; // px; equals .dnb-row height in widget.css
const OVERSCAN = 10; // rows drawn above and below the visible window
const MARGIN = 30; // lines fetched beyond the drawn ones
const MAX_CACHE = 1500; // lines kept; the farthest from the window are dropped
const MAX_INDENT = 16; // deeper branches are drawn at this indent (the depth is still shown)
const FIRST_CHECK_MS = 600; // a request not answered by then says why (kernel gone) or that it waits
const GIVE_UP_MS = 15000; // a request not answered by then is reported as unanswered
const RESTARTED = "this view belongs to a kernel that was restarted — run %durable show";
const LINES_WAIT_MS = 3000; // lines not answered by then: say the kernel is busy or gone
const LINES_WAIT = "the tree's entries come from the kernel, which has not answered yet: it is busy running a cell, or gone — run %durable show for a fresh view";
const MAX_CHANGES = 40; // changes of one diff listed under the compare view (a line says how many more)
const GONE = "this view's kernel is gone (shut down or dead) — start one and run %durable show";
/** The row drawn above several root-level entries: the session's start, where they branch. @type {Row} */
const START = { id: "", parent_id: "", type: "start", preview: "start of the session: the first entries branch here" };

/**
 * Make an element with a class and text (text always via textContent).
 * @param {string} tag @param {string} [cls] @param {unknown} [text]
 * @returns {HTMLElement}
 */
function h(tag, cls, text) {
  const el = document.createElement(tag);
  if (cls) el.className = cls;
  if (text !== undefined && text !== null) el.textContent = String(text);
  return el;
}

/** @param {string} id */
const short = (id) => (id ? id.slice(0, 8) : "—");

/**
 * The lines of the tree Python sent, by index, for one layout revision: a window
 * of the tree (what is drawn plus a margin), never the whole of it.
 */
class Lines {
  constructor() {
    /** @type {Map<number, Line>} */ this.at = new Map();
    /** @type {Map<string, number>} */ this.index = new Map();
    /** @type {[number, number][]} */ this.asked = []; // ranges requested at this revision
    this.rev = -1;
  }
  /** @param {number} from forget the lines from this index on (all when 0) */
  dropFrom(from) {
    for (const [i, line] of this.at) {
      if (i < from) continue;
      this.at.delete(i);
      if (this.index.get(line.row.id) === i) this.index.delete(line.row.id);
    }
    this.asked = [];
  }
  /** @param {number} start @param {Line[]} lines */
  put(start, lines) {
    lines.forEach((line, k) => {
      const old = this.at.get(start + k);
      if (old && this.index.get(old.row.id) === start + k) this.index.delete(old.row.id);
      this.at.set(start + k, line);
      this.index.set(line.row.id, start + k);
    });
  }
  /** Keep at most MAX_CACHE lines, the nearest to index `around`. @param {number} around */
  trim(around) {
    if (this.at.size <= MAX_CACHE) return;
    const far = [...this.at.keys()].sort((a, b) => Math.abs(b - around) - Math.abs(a - around));
    for (const i of far.slice(0, this.at.size - MAX_CACHE)) {
      const line = /** @type {Line} */ (this.at.get(i));
      this.at.delete(i);
      if (this.index.get(line.row.id) === i) this.index.delete(line.row.id);
    }
    this.asked = [];
  }
  /** @param {number} i @returns {boolean} whether line i was asked for at this revision */
  pending(i) {
    return this.asked.some(([a, b]) => i >= a && i < b);
  }
}

/**
 * A reply's tokens and cost for a badge or the details: "1,234 in / 56 out · $0.00022" (Python priced it:
 * durable_nb.cost), "cost unknown" when the price table does not know the model; "" without usage.
 * @param {Row | undefined} r @returns {string}
 */
function costText(r) {
  if (!r || !r.tokens) return "";
  const n = (/** @type {number} */ x) => x.toLocaleString("en-US");
  return `${n(r.tokens[0])} in / ${n(r.tokens[1])} out${r.cost ? " · " + r.cost : ""}`;
}

/**
 * A duration for a badge: "12 ms", "3.4 s".
 * @param {unknown} ms @returns {string}
 */
function duration(ms) {
  if (typeof ms !== "number" || !isFinite(ms)) return "";
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(ms < 10000 ? 1 : 0)} s`;
}

/**
 * The badge of a tool result: "result · error · 12 ms" (error colour when it failed), or null.
 * @param {{tool_call_id?: string, is_error?: boolean, duration_ms?: number, timing?: any}} m
 * @param {string} [prefix] @returns {HTMLElement | null}
 */
function resultBadge(m, prefix = "result") {
  if (!m.tool_call_id) return null;
  const ms = duration(m.duration_ms ?? (m.timing || {}).duration_ms);
  return h("span", `dnb-badge ${m.is_error ? "dnb-failed" : "dnb-tool"}`, `${prefix}${m.is_error ? " · error" : ""}${ms ? " · " + ms : ""}`);
}

/**
 * An origin as a reader knows it. `cell:<id>` names the cell when the page shows it (durable_nb's
 * JupyterLab / Notebook 7 extension marks each cell with `data-durable-cell-id`): its execution count
 * and first line after the `%%durable` line, e.g. `cell [3] "Answer in French."`; otherwise the
 * origin as recorded. Text only (textContent).
 * @param {string} origin @returns {string}
 */
function originLabel(origin) {
  if (!origin || !origin.startsWith("cell:") || typeof document === "undefined") return origin;
  const id = origin.slice(5);
  /** @type {HTMLElement | null} */ let cell = null;
  try {
    cell = document.querySelector(`.jp-Cell[data-durable-cell-id="${CSS.escape(id)}"]`);
  } catch {
    return origin;
  }
  if (!cell) return origin;
  const prompt = (cell.querySelector(".jp-InputPrompt")?.textContent || "").replace(/[:\s]/g, "");
  const lines = Array.from(cell.querySelectorAll(".jp-InputArea-editor .cm-line"), (l) => l.textContent || "");
  const first = lines.find((l) => l.trim() && !l.trim().startsWith("%%")) || "";
  const text = first.length > 40 ? `${first.slice(0, 39)}…` : first;
  return `cell${prompt && prompt !== "[]" ? " " + prompt : ""}${text ? ` "${text.trim()}"` : ""}`;
}

/**
 * One badge per injection / synthesized marker, or null.
 * @param {{injected?: string, origin?: string}} m @returns {HTMLElement | null}
 */
function injectionBadge(m) {
  if (!m.injected) return null;
  const b = h("span", `dnb-badge dnb-${m.injected}`, m.origin ? `${m.injected} · ${originLabel(m.origin)}` : m.injected);
  if (m.origin) b.title = m.origin;
  return b;
}

/**
 * Draw content blocks (as Python's codec encodes them) as text.
 * @param {any[]} blocks @param {boolean} forModel show reminders as model-only context
 * @returns {HTMLElement}
 */
function drawBlocks(blocks, forModel) {
  const box = h("div", "dnb-blocks");
  for (const b of blocks || []) {
    if (b.type === "text") box.append(h("div", "dnb-text", b.text));
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
      const d = /** @type {HTMLDetailsElement} */ (h("details", "dnb-thinking"));
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

/** The name a compare side goes by: its short id when given by id (or prefix), else `label (short id)`. @param {any} s */
function sideName(s) {
  return s.entry_id.startsWith(s.ref) ? short(s.entry_id) : `${s.ref} (${short(s.entry_id)})`;
}

/** A value of a setting for the diff: "(not set)" for none. @param {unknown} v */
const settingValue = (v) => (v === null || v === undefined ? "(not set)" : JSON.stringify(v));

/**
 * One message of a compare side (as share/comparison.py's message_state writes it), marked with how a diff changed it.
 * @param {any} m @param {string} [op] "added", "removed", "changed" or undefined
 * @returns {HTMLElement}
 */
function compareMessage(m, op) {
  const card = h("div", `dnb-card dnb-card-${m.role}${m.injected ? " dnb-card-" + m.injected : ""}${op ? " dnb-diff-" + op : ""}`);
  const head = h("div", "dnb-card-head");
  head.append(h("span", "dnb-index", `#${m.i + 1}`), h("span", "dnb-label", m.role));
  const inj = injectionBadge(m);
  if (inj) head.append(inj);
  if (op) head.append(h("span", `dnb-badge dnb-diff-badge dnb-diff-${op}`, op));
  card.append(head, h("div", "dnb-text", m.text));
  return card;
}

/**
 * Draw a comparison (Python's `comparison` trait: share/comparison.py's state) into `panel`: the sides
 * in columns (name, labels, model, settings, tokens and cost, time, system prompt, the request's messages
 * a diff names plus its last few, the reply), then each diff as a list. Text only (textContent).
 * @param {HTMLElement} panel @param {any} c @param {() => void} onClear
 */
function drawCompare(panel, c, onClear) {
  panel.replaceChildren();
  const sides = (c && c.sides) || [];
  const head = h("div", "dnb-view-head");
  if (!sides.length) {
    head.textContent = "Compare: pick two or more entries in the tree (“Pick for compare” in an entry's details), then “Compare”.";
    panel.append(head);
    return;
  }
  head.textContent = `Compare ${sides.length} entries: each request against the first's, and the replies side by side.`;
  const clear = /** @type {HTMLButtonElement} */ (h("button", "dnb-action dnb-compare-clear", "Clear comparison"));
  clear.type = "button";
  clear.addEventListener("click", onClear);
  head.append(" ", clear);
  panel.append(head);
  // what each side's messages went through, from every diff (the first side: removed / changed)
  /** @type {Map<string, string>[]} */ const ops = sides.map(() => new Map());
  for (const d of c.diffs || []) {
    for (const ch of d.messages) {
      if (ch.a !== null && ch.a !== undefined) ops[d.a].set(String(ch.a), ch.op);
      if (ch.b !== null && ch.b !== undefined) ops[d.b].set(String(ch.b), ch.op);
    }
  }
  const grid = h("div", "dnb-compare-grid");
  grid.style.gridTemplateColumns = `repeat(${sides.length}, minmax(220px, 1fr))`;
  sides.forEach((/** @type {any} */ s, /** @type {number} */ i) => {
    const col = h("div", "dnb-compare-side");
    col.dataset.side = String(i);
    const title = h("div", "dnb-compare-title");
    title.append(h("strong", "", sideName(s)));
    for (const name of s.labels || []) if (name !== s.ref) title.append(h("span", "dnb-badge dnb-labelmark", name)); // other names
    if (i === 0) title.append(h("span", "dnb-badge", "base"));
    col.append(title);
    const table = h("dl", "dnb-kv");
    const kv = (/** @type {string} */ k, /** @type {unknown} */ v) => table.append(h("dt", "", k), h("dd", "", v));
    kv("model", s.model || "(no reply)");
    kv("settings", Object.entries(s.settings || {}).map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(", ") || "provider defaults");
    kv("reply", s.cost ? s.cost.summary : "no reply");
    kv("branch", s.branch_cost.summary);
    kv("time", duration(s.total_ms) || "not recorded");
    kv("request", `${s.message_total} message${s.message_total === 1 ? "" : "s"}`);
    col.append(table);
    const sys = /** @type {HTMLDetailsElement} */ (h("details", "dnb-compare-system"));
    sys.append(h("summary", "", s.system === null || s.system === undefined ? "system prompt: none" : `system prompt · ${s.system.length} chars`));
    if (s.system) sys.append(h("div", "dnb-text", s.system));
    col.append(sys);
    let prev = -1;
    for (const m of s.messages) {
      if (m.i > prev + 1) col.append(h("div", "dnb-muted dnb-compare-gap", `… ${m.i - prev - 1} message${m.i - prev - 1 === 1 ? "" : "s"} not shown (#${prev + 2}–#${m.i}; the entry's model view has them)`));
      col.append(compareMessage(m, ops[i].get(String(m.i))));
      prev = m.i;
    }
    col.append(h("div", "dnb-compare-reply-head", "reply"));
    if (s.reply) {
      const card = h("div", "dnb-card dnb-card-assistant dnb-compare-reply");
      card.append(h("div", "dnb-text", s.reply.text));
      col.append(card);
    } else col.append(h("div", "dnb-muted", "(none: this entry has no reply)"));
    grid.append(col);
  });
  panel.append(grid);
  for (const d of c.diffs || []) {
    const a = sides[d.a];
    const b = sides[d.b];
    const box = h("div", "dnb-compare-diff");
    const counts = ["changed", "added", "removed"].map((op) => [op, d.messages.filter((/** @type {any} */ ch) => ch.op === op).length]).filter(([, n]) => n);
    const what = counts.map(([op, n]) => `${n} ${op}`).join(", ");
    box.append(h("div", "dnb-compare-diff-head", `${sideName(b)} against ${sideName(a)}: ${d.same} message${d.same === 1 ? "" : "s"} the same${what ? ", " + what : ""}`));
    const list = h("ul", "dnb-compare-diff-list");
    const li = (/** @type {string} */ cls, /** @type {string} */ text) => list.append(h("li", cls, text));
    if (d.model) li("dnb-diff-model", `model: ${d.model[0] || "(none)"} → ${d.model[1] || "(none)"}`);
    for (const [k, [va, vb]] of Object.entries(d.settings || {})) li("dnb-diff-setting", `setting ${k}: ${settingValue(va)} → ${settingValue(vb)}`);
    if (d.system) li("dnb-diff-system", `system prompt: ${d.system[0] === null ? "(none)" : JSON.stringify(d.system[0])} → ${d.system[1] === null ? "(none)" : JSON.stringify(d.system[1])}`);
    const byA = new Map(a.messages.map((/** @type {any} */ m) => [m.i, m]));
    const byB = new Map(b.messages.map((/** @type {any} */ m) => [m.i, m]));
    const one = (/** @type {any} */ m) => {
      if (!m) return "(not shown here: see that entry's model view)";
      const t = m.text.replace(/\s+/g, " ").trim();
      return `${m.role}${m.injected ? " [" + m.injected + "]" : ""}: ${t.length > 80 ? t.slice(0, 79) + "…" : t}`;
    };
    for (const ch of d.messages.slice(0, MAX_CHANGES)) {
      if (ch.op === "changed") li("dnb-diff-changed", `~ #${ch.a + 1} ${one(byA.get(ch.a))}  →  #${ch.b + 1} ${one(byB.get(ch.b))}`);
      else if (ch.op === "added") li("dnb-diff-added", `+ #${ch.b + 1} ${one(byB.get(ch.b))}`);
      else li("dnb-diff-removed", `− #${ch.a + 1} ${one(byA.get(ch.a))}`);
    }
    if (d.messages.length > MAX_CHANGES) li("dnb-muted", `… and ${d.messages.length - MAX_CHANGES} more changes`);
    if (!list.childElementCount) li("dnb-muted", "the requests are the same");
    box.append(list);
    panel.append(box);
  }
}

/**
 * @param {{ model: Model, el: HTMLElement }} ctx
 * @returns {() => void} cleanup
 */
function render({ model, el }) {
  const cache = new Lines();
  /** @type {Tree} */ let tree = model.get("tree") || { rev: 0, lines: 0, entries: 0, changed_from: 0, leaf_line: -1 };
  cache.rev = tree.rev;
  /** @type {{ rev: number, start: number, lines: Line[] }[]} */ let ahead = []; // pushed before their `tree` update
  /** @type {number | null} */ let wantIndex = null; // select the line at this index once it arrives
  let wantReveal = ""; // scroll to this entry once Python says where it is
  let firstPaint = true;
  /** @type {any} */ let linesTimer = null;
  /** @type {any} */ let seenViews = null;
  /** @type {any} */ let seenHidden = null;
  /** @type {any} */ let seenComparison = null;
  let lastLeaf = "";
  /** @type {any} */ let labelsSeen = null;
  /** @type {Map<string, string[]>} */ let names = new Map();
  /** The label names on entry `id` (the `labels` trait is {name: entry id}). @param {string} id @returns {string[]} */
  function namesOf(id) {
    const labels = model.get("labels") || {};
    if (labels !== labelsSeen) {
      labelsSeen = labels;
      names = new Map();
      for (const [name, target] of Object.entries(labels)) names.set(String(target), [...(names.get(String(target)) || []), name]);
    }
    return names.get(id) || [];
  }

  const root = h("div", "dnb-widget");
  const bar = h("div", "dnb-bar");
  const tabs = h("div", "dnb-tabs");
  /** @type {Record<string, HTMLButtonElement>} */ const tabButtons = {};
  for (const [name, label] of [["tree", "Tree"], ["model", "Model view"], ["transcript", "Transcript view"], ["compare", "Compare"]]) {
    const b = /** @type {HTMLButtonElement} */ (h("button", "dnb-tab", label));
    b.type = "button";
    b.dataset.view = name;
    b.addEventListener("click", () => setView(name));
    tabButtons[name] = b;
    tabs.append(b);
  }
  const status = h("div", "dnb-status");
  const follow = /** @type {HTMLButtonElement} */ (h("button", "dnb-action dnb-follow", "Follow leaf"));
  follow.type = "button";
  follow.addEventListener("click", () => {
    select("");
    reveal(model.get("leaf_id") || ""); // back to the leaf, wherever a find or a click took the tree
  });
  bar.append(tabs, status, follow);
  // the second bar: find, the kind filter, the entries picked for a comparison
  const tools = h("div", "dnb-tools");
  const find = h("div", "dnb-find");
  const findInput = /** @type {HTMLInputElement} */ (h("input", "dnb-find-input"));
  findInput.type = "search";
  findInput.placeholder = "Find in every branch";
  findInput.setAttribute("aria-label", "Find in every branch (every word, whole words)");
  const findPrev = /** @type {HTMLButtonElement} */ (h("button", "dnb-action dnb-find-prev", "‹"));
  const findNext = /** @type {HTMLButtonElement} */ (h("button", "dnb-action dnb-find-next", "›"));
  findPrev.type = findNext.type = "button";
  findPrev.title = "Previous match (Shift+Enter)";
  findNext.title = "Next match (Enter)";
  const findCount = h("span", "dnb-find-count");
  find.append(findInput, findPrev, findNext, findCount);
  const filter = h("div", "dnb-filter");
  filter.append(h("span", "", "Hide:"));
  /** @type {Record<string, HTMLInputElement>} */ const filterBoxes = {};
  for (const [group, label, title] of [
    ["custom", "custom entries", "labels, notes and other custom entries"],
    ["aside", "progress & hooks", "other tools' bookkeeping records: progress lines, hook output, snapshots"],
    ["tool_result", "tool results", "collapse tool results into the row of the call (and fold them in the model view)"],
  ]) {
    const lab = h("label", `dnb-filter-${group}`);
    const box = /** @type {HTMLInputElement} */ (h("input"));
    box.type = "checkbox";
    box.dataset.group = group;
    box.addEventListener("change", sendFilter);
    lab.title = title;
    lab.append(box, document.createTextNode(label));
    filterBoxes[group] = box;
    filter.append(lab);
  }
  const pickBar = h("div", "dnb-picks");
  const pickCount = h("span", "dnb-muted", "");
  const compareBtn = /** @type {HTMLButtonElement} */ (h("button", "dnb-action dnb-compare-go", "Compare"));
  const unpickBtn = /** @type {HTMLButtonElement} */ (h("button", "dnb-action dnb-compare-unpick", "Clear picks"));
  compareBtn.type = unpickBtn.type = "button";
  compareBtn.title = "Compare the picked entries side by side (pick them in an entry's details)";
  pickBar.append(pickCount, compareBtn, unpickBtn);
  tools.append(find, filter, pickBar);
  const costLine = h("div", "dnb-costline"); // tokens and cost: the views' path and the whole session (Python's sums)
  costLine.hidden = true;
  const error = h("div", "dnb-error");
  const notice = h("div", "dnb-notice");
  notice.hidden = true;
  const legend = h("div", "dnb-legend");
  for (const [cls, text] of [["dnb-key-active", "active path"], ["dnb-key-leaf", "leaf"], ["dnb-key-eph", "ephemeral (off the chain)"], ["dnb-key-elided", "elided by compaction"]]) {
    const k = h("span", "dnb-key");
    k.append(h("span", `dnb-swatch ${cls}`), document.createTextNode(text));
    legend.append(k);
  }

  const treePanel = h("div", "dnb-panel dnb-tree-panel");
  const scroll = h("div", "dnb-scroll");
  scroll.tabIndex = 0;
  const spacer = h("div", "dnb-spacer");
  scroll.append(spacer);
  const details = h("div", "dnb-details");
  treePanel.append(legend, scroll, details);
  const modelPanel = h("div", "dnb-panel dnb-model-panel");
  const transcriptPanel = h("div", "dnb-panel dnb-transcript-panel");
  const comparePanel = h("div", "dnb-panel dnb-compare-panel");
  root.append(bar, tools, costLine, error, notice, treePanel, modelPanel, transcriptPanel, comparePanel);
  el.append(root);

  /** @param {string} name "tree", "model" or "transcript" */
  function setView(name) {
    model.set("view", name);
    model.save_changes();
    showView();
  }

  /**
   * An ordinary user message that no entry answers (a failed or stopped turn), other than the leaf.
   * @param {Line} line @param {string} leaf
   */
  function unanswered(line, leaf) {
    const r = line.row;
    return r.type === "message" && r.role === "user" && !r.injected && r.id !== leaf && !line.kids;
  }

  // -- the kernel behind this view: requests time out with a message, a restart is said at once --
  /** @type {string} */ let stale = "";
  /** @type {{ what: string, check: () => boolean, started: number, timer: any } | null} */ let pending = null;
  const kernel = () => /** @type {any} */ (model).widget_manager?.kernel ?? null;
  /** Why this view can get no answer ("" if it can, or if the host does not say). */
  function staleReason() {
    if (stale) return stale;
    const k = kernel();
    if (k && (k.isDisposed || k.status === "dead" || k.connectionStatus === "disconnected")) return GONE;
    return "";
  }
  /** @param {string} why */
  function markStale(why) {
    if (stale) return;
    stale = why;
    pending = null;
    root.classList.add("dnb-is-stale");
    drawStatus();
    drawDetails();
  }
  /** A restart (ipywidgets marks every model's comm dead) or a dying kernel makes this view stale. */
  const onCommLive = () => markStale(RESTARTED);
  model.on("comm_live_update", onCommLive);
  const k0 = kernel();
  /** @param {any} _ @param {string} status */
  const onStatus = (_, status) => {
    if (status === "restarting" || status === "autorestarting") markStale(RESTARTED);
    else if (status === "dead") markStale(GONE);
  };
  if (k0 && k0.statusChanged) k0.statusChanged.connect(onStatus);

  /**
   * Send nothing and say why when the view is stale; otherwise remember what answers the request:
   * after FIRST_CHECK_MS without an answer the view says why (kernel gone) or that it waits, after
   * GIVE_UP_MS that no answer came.
   * @param {string} what @param {() => boolean} check @returns {boolean} whether to send
   */
  function request(what, check) {
    const why = staleReason();
    if (why) {
      markStale(why);
      drawStatus();
      return false;
    }
    if (pending) clearTimeout(pending.timer);
    pending = { what, check, started: Date.now(), timer: null };
    const tick = () => {
      if (!pending) return;
      if (pending.check()) return settle();
      const gone = staleReason();
      if (gone) return markStale(gone);
      const waited = Date.now() - pending.started;
      notice.hidden = false;
      if (waited >= GIVE_UP_MS) {
        notice.textContent = `no answer from the kernel after ${Math.round(waited / 1000)} s (${pending.what}): it is busy or gone — run %durable show for a fresh view`;
        pending = null;
        return;
      }
      notice.textContent = `waiting for the kernel (${pending.what}): it is busy running a cell…`;
      pending.timer = setTimeout(tick, 500);
    };
    pending.timer = setTimeout(tick, FIRST_CHECK_MS);
    return true;
  }
  /** The pending request was answered (or there was none). */
  function settle() {
    if (pending && !pending.check()) return;
    if (pending) clearTimeout(pending.timer);
    pending = null;
    notice.hidden = true;
    notice.textContent = "";
  }

  /** @param {string} id */
  function select(id) {
    if (!request(`entry ${short(id)}`, () => !id || (model.get("views") || {}).at === id)) {
      paintRows();
      return;
    }
    model.set("selected_id", id);
    model.save_changes();
    paintRows();
    drawDetails();
  }

  // -- find: Python searches every branch; the page walks the hits in drawn order ----
  /** @type {{ query: string, asked: string, total: number, hits: {id: string, index: number, drawn: string}[], at: number }} */
  let found = { query: "", asked: "", total: 0, hits: [], at: -1 };
  /** @type {Set<string>} */ let hitRows = new Set(); // the drawn rows that hold (or stand in for) a hit
  /** Ask Python for the hits of the query in the box (again, when the tree changed). @param {boolean} [keep] keep the current hit */
  function sendSearch(keep = false) {
    const q = findInput.value.trim();
    if (!q) {
      found = { query: "", asked: "", total: 0, hits: [], at: -1 };
      hitRows = new Set();
      drawFind();
      paintRows();
      return;
    }
    if (staleReason()) return;
    found.asked = q;
    if (!keep) found.at = -1;
    findCount.textContent = "searching…";
    model.send({ action: "search", query: q });
  }
  /** @param {any} msg Python's {reply: "search"} */
  function onSearch(msg) {
    if (msg.query !== found.asked) return; // an answer to an older query
    const current = found.at >= 0 && found.hits[found.at] ? found.hits[found.at].id : "";
    const again = msg.query === found.query;
    found = { query: msg.query, asked: msg.query, total: msg.total, hits: msg.hits || [], at: -1 };
    hitRows = new Set(found.hits.map((x) => x.drawn || x.id));
    const keepAt = again && current ? found.hits.findIndex((x) => x.id === current) : -1;
    if (keepAt >= 0) {
      found.at = keepAt;
      drawFind();
      paintRows();
    } else go(0);
  }
  /** Reveal hit number k (wrapping): scroll its row into view, select it, say where it is. @param {number} k */
  function go(k) {
    const n = found.hits.length;
    if (!n) {
      found.at = -1;
      drawFind();
      paintRows();
      return;
    }
    found.at = ((k % n) + n) % n;
    const hit = found.hits[found.at];
    if (model.get("view") !== "tree") setView("tree");
    if (hit.index >= 0) scrollTo(hit.index);
    else reveal(hit.drawn || hit.id);
    select(hit.id);
    drawFind();
  }
  function drawFind() {
    if (!found.query) findCount.textContent = "";
    else if (!found.total) findCount.textContent = "no match";
    else {
      const more = found.total > found.hits.length ? ` (first ${found.hits.length} listed)` : "";
      findCount.textContent = `${found.at + 1} of ${found.total}${more}`;
    }
    findPrev.disabled = findNext.disabled = found.hits.length < 2;
  }
  let findTimer = /** @type {any} */ (null);
  findInput.addEventListener("input", () => {
    clearTimeout(findTimer);
    findTimer = setTimeout(() => sendSearch(), 300);
  });
  findInput.addEventListener("keydown", (ev) => {
    if (ev.key !== "Enter") return;
    ev.preventDefault();
    clearTimeout(findTimer);
    if (findInput.value.trim() !== found.query) sendSearch();
    else go(found.at + (ev.shiftKey ? -1 : 1));
  });
  findPrev.addEventListener("click", () => go(found.at - 1));
  findNext.addEventListener("click", () => go(found.at + 1));

  // -- the kind filter: Python lays the tree out again without those entries --------
  function sendFilter() {
    const hide = Object.keys(filterBoxes).filter((g) => filterBoxes[g].checked);
    if (!request("filter", () => JSON.stringify(model.get("hidden") || []) === JSON.stringify(hide) || !!model.get("error"))) return;
    model.send({ action: "filter", hide });
  }

  // -- picks for a comparison ---------------------------------------------------------
  /** @type {string[]} */ let picks = [];
  /** @param {string} id */
  function togglePick(id) {
    picks = picks.includes(id) ? picks.filter((x) => x !== id) : [...picks, id];
    drawPicks();
    paintRows();
    drawDetails();
  }
  function drawPicks() {
    pickCount.textContent = picks.length ? `${picks.length} picked` : "";
    compareBtn.disabled = picks.length < 2;
    unpickBtn.hidden = !picks.length;
  }
  compareBtn.addEventListener("click", () => {
    const before = model.get("comparison");
    if (!request("compare", () => model.get("comparison") !== before || !!model.get("error"))) return;
    model.send({ action: "compare", ids: picks });
  });
  unpickBtn.addEventListener("click", () => {
    picks = [];
    drawPicks();
    paintRows();
    drawDetails();
  });
  function clearComparison() {
    const before = model.get("comparison");
    if (!request("clear the comparison", () => model.get("comparison") !== before)) return;
    model.send({ action: "compare", ids: [] });
  }

  // -- the lines: fetched from Python around what is drawn ------------------------
  /** @param {string} id @returns {Line | undefined} the cached line of entry `id` */
  function lineOf(id) {
    const i = cache.index.get(id);
    return i === undefined ? undefined : cache.at.get(i);
  }
  /** @param {string} id @returns {number | undefined} the line index of entry `id`, when known here */
  function indexOf(id) {
    const i = cache.index.get(id);
    if (i !== undefined) return i;
    if (id && id === model.get("leaf_id") && tree.leaf_line >= 0) return tree.leaf_line;
    return undefined;
  }
  /** Ask Python for the lines of [a, b) this page has not got or asked for yet. @param {number} a @param {number} b */
  function ensure(a, b) {
    a = Math.max(0, a);
    b = Math.min(tree.lines, b);
    let lo = -1;
    let hi = -1;
    for (let i = a; i < b; i++) {
      if (cache.at.has(i) || cache.pending(i)) continue;
      if (lo < 0) lo = i;
      hi = i + 1;
    }
    if (lo < 0 || staleReason()) return;
    cache.asked.push([lo, hi]);
    model.send({ action: "lines", start: lo, stop: hi });
    const rev = tree.rev;
    clearTimeout(linesTimer);
    linesTimer = setTimeout(() => {
      if (tree.rev !== rev || cache.at.has(lo) || !notice.hidden || stale) return;
      notice.hidden = false;
      notice.textContent = LINES_WAIT;
    }, LINES_WAIT_MS);
  }
  /** A new layout revision: forget the lines from where it changed, take the lines pushed ahead of it. */
  function onTree() {
    const t = model.get("tree") || tree;
    if (t.rev === tree.rev) return;
    const from = t.rev === tree.rev + 1 && typeof t.changed_from === "number" ? t.changed_from : 0;
    tree = t;
    cache.dropFrom(from);
    cache.rev = t.rev;
    for (const p of ahead) if (p.rev === t.rev) cache.put(p.start, p.lines);
    ahead = ahead.filter((p) => p.rev > t.rev);
    if (found.query) sendSearch(true); // the hits' lines moved: ask again, keeping the current hit
    refresh();
  }
  /** Python's replies: lines, and where an entry is. @param {any} msg */
  function onCustom(msg) {
    if (!msg || typeof msg !== "object") return;
    if (msg.reply === "lines" && Array.isArray(msg.lines)) {
      if (msg.rev > tree.rev) ahead.push({ rev: msg.rev, start: msg.start, lines: msg.lines });
      if (msg.rev !== tree.rev) return;
      cache.put(msg.start, msg.lines);
      if (notice.textContent === LINES_WAIT) {
        notice.hidden = true;
        notice.textContent = "";
      }
      cache.trim(Math.floor(scroll.scrollTop / ROW_H));
      if (wantIndex !== null && cache.at.has(wantIndex)) {
        const line = /** @type {Line} */ (cache.at.get(wantIndex));
        wantIndex = null;
        if (line.row.id) select(line.row.id);
      }
      paintRows();
      drawDetails();
    } else if (msg.reply === "search") {
      onSearch(msg);
    } else if (msg.reply === "locate" && msg.rev === tree.rev && msg.id === wantReveal) {
      wantReveal = "";
      if (msg.index >= 0) scrollTo(msg.index);
    }
  }

  /**
   * Draw one tree row.
   * @param {Line} line @param {number} index @param {string} leaf @param {string} at
   * @returns {HTMLElement}
   */
  function drawRow(line, index, leaf, at) {
    const r = line.row;
    if (!r) return placeholder(index);
    const eph = r.injected === "ephemeral";
    const div = h("div", "dnb-row");
    div.style.top = `${index * ROW_H}px`;
    div.dataset.id = r.id;
    div.setAttribute("role", "treeitem");
    div.setAttribute("aria-level", String(line.depth + 1));
    if (line.on) div.classList.add("dnb-active");
    if (r.id === leaf) div.classList.add("dnb-leaf");
    if (r.id === at) div.classList.add("dnb-selected");
    if (eph) div.classList.add("dnb-eph");
    if (line.elided) div.classList.add("dnb-elided");
    if (hitRows.has(r.id)) {
      div.classList.add("dnb-hit");
      const cur = found.hits[found.at];
      if (cur && (cur.drawn || cur.id) === r.id) div.classList.add("dnb-hit-current");
    }
    div.classList.add(`dnb-type-${r.type}`);
    const indent = h("span", "dnb-indent");
    indent.style.width = `${Math.min(line.depth, MAX_INDENT) * 14}px`;
    const glyph = { root: "●", cont: "│", branch: "└", eph: "┄" }[line.mark];
    div.append(indent, h("span", "dnb-glyph", line.mark === "cont" ? "●" : glyph + (line.mark === "root" ? "" : "●")));
    if (line.depth > MAX_INDENT) div.append(h("span", "dnb-badge", `depth ${line.depth}`));
    const label = r.type === "message" ? r.role : r.type === "custom" ? `custom · ${r.kind || "?"}` : r.type;
    if (r.type === "start") div.classList.add("dnb-start");
    div.append(h("span", `dnb-label dnb-role-${r.role || r.type}`, label));
    for (const name of namesOf(r.id)) div.append(h("span", "dnb-badge dnb-name", name));
    const inj = injectionBadge(r);
    if (inj) div.append(inj);
    if (r.id === leaf) div.append(h("span", "dnb-badge dnb-leafmark", "leaf"));
    const pick = picks.indexOf(r.id);
    if (pick >= 0) div.append(h("span", "dnb-badge dnb-pickmark", `pick ${pick + 1}`));
    const nb = line.kids > 1 ? line.kids : 0;
    if (nb) div.append(h("span", "dnb-badge dnb-fork", `${nb} branches`));
    if (r.thinking) div.append(h("span", "dnb-badge dnb-think", "thinking"));
    if (unanswered(line, leaf)) div.append(h("span", "dnb-badge dnb-failed dnb-noreply", "no reply"));
    if (r.tools) div.append(h("span", "dnb-badge dnb-tool", `calls ${r.tools.join(", ")}`));
    if (r.bad_arguments) div.append(h("span", "dnb-badge dnb-failed", "malformed arguments"));
    const res = resultBadge(r);
    if (res) div.append(res);
    if (r.reminders) div.append(h("span", "dnb-badge dnb-meta", `+${r.reminders} reminder`));
    if (r.attachments) div.append(h("span", "dnb-badge", r.attachments.join(", ")));
    const cost = costText(r);
    if (cost) div.append(h("span", `dnb-badge dnb-cost${r.cost === "cost unknown" ? " dnb-unknown" : ""}`, cost));
    let text = r.preview;
    if (r.type === "compaction") {
      const span = r.elides ? `elides ${r.elides[2]} entries ${short(r.elides[0])}…${short(r.elides[1])}` : "elides nothing";
      text = `${span} · ~${r.tokens_before || 0} tokens · ${r.preview}`;
    }
    div.append(h("span", "dnb-preview", text));
    div.title = `${r.id}${r.created_at ? " · " + r.created_at : ""}`;
    return div;
  }

  /** A line not here yet: drawn empty at its place until Python's answer arrives. @param {number} index */
  function placeholder(index) {
    const div = h("div", "dnb-row dnb-loading");
    div.style.top = `${index * ROW_H}px`;
    div.append(h("span", "dnb-muted", "…"));
    return div;
  }

  /** Draw only the rows in (and near) the visible window, asking Python for missing lines. O(visible rows). */
  function paintRows() {
    const n = tree.lines;
    spacer.style.height = `${n * ROW_H}px`;
    const top = scroll.scrollTop;
    const height = scroll.clientHeight || 400;
    const first = Math.max(0, Math.floor(top / ROW_H) - OVERSCAN);
    const last = Math.min(n, Math.ceil((top + height) / ROW_H) + OVERSCAN);
    const leaf = model.get("leaf_id") || "";
    const at = model.get("selected_id") || "";
    const frag = document.createDocumentFragment();
    for (let i = first; i < last; i++) {
      const line = cache.at.get(i);
      frag.append(line ? drawRow(line, i, leaf, at) : placeholder(i));
    }
    spacer.replaceChildren(frag);
    ensure(first - MARGIN, last + MARGIN);
  }

  /** @param {number} i scroll the tree so line i is visible (centred when it was not) */
  function scrollTo(i) {
    const top = i * ROW_H;
    const height = scroll.clientHeight || 400;
    if (top < scroll.scrollTop || top + ROW_H > scroll.scrollTop + height) scroll.scrollTop = Math.max(0, top - height / 2);
    paintRows();
  }

  /** @param {string} id scroll the tree so the row of `id` is visible (asking Python where it is if need be) */
  function reveal(id) {
    if (!id) return;
    const i = indexOf(id);
    if (i !== undefined) return scrollTo(i);
    if (staleReason()) return;
    wantReveal = id;
    model.send({ action: "locate", id });
  }

  let scheduled = false;
  scroll.addEventListener("scroll", () => {
    if (scheduled) return;
    scheduled = true;
    requestAnimationFrame(() => {
      scheduled = false;
      paintRows();
    });
  });
  // Arrow keys move the selection through the drawn order; Home/End jump.
  scroll.addEventListener("keydown", (ev) => {
    const n = tree.lines;
    if (!n || !["ArrowDown", "ArrowUp", "Home", "End"].includes(ev.key)) return;
    ev.preventDefault();
    const cur = model.get("selected_id") || model.get("leaf_id") || "";
    const i = indexOf(cur) ?? -1;
    const j = ev.key === "Home" ? 0 : ev.key === "End" ? n - 1 : Math.max(0, Math.min(n - 1, i + (ev.key === "ArrowDown" ? 1 : -1)));
    const line = cache.at.get(j);
    if (line) {
      if (line.row.id) select(line.row.id);
    } else wantIndex = j; // selected when its line arrives
    scrollTo(j);
  });
  scroll.addEventListener("click", (ev) => {
    const rowEl = /** @type {HTMLElement | null} */ (/** @type {HTMLElement} */ (ev.target).closest(".dnb-row"));
    if (rowEl && rowEl.dataset.id) select(rowEl.dataset.id);
  });

  /**
   * A key/value line of the details table.
   * @param {HTMLElement} table @param {string} key @param {unknown} value
   */
  function kv(table, key, value) {
    if (value === undefined || value === null || value === "") return;
    table.append(h("dt", "", key), h("dd", "", value));
  }

  /** Draw the details of the entry the views are at (Python's full entry). */
  function drawDetails() {
    const v = model.get("views") || {};
    const want = model.get("selected_id") || model.get("leaf_id") || "";
    details.replaceChildren();
    if (!want) {
      details.append(h("div", "dnb-muted", "Empty session: no entries yet."));
      return;
    }
    const e = v.entry;
    if (!e || v.at !== want) {
      details.append(stale ? h("div", "dnb-stale", stale) : h("div", "dnb-muted", `Loading entry ${short(want)}…`));
      return;
    }
    const leaf = model.get("leaf_id") || "";
    const msg = e.message || {};
    const eph = msg.injected === "ephemeral";
    const head = h("div", "dnb-details-head");
    head.append(h("strong", "", e.type === "message" ? `${msg.role} message` : e.type === "custom" ? `custom entry · ${e.kind}` : `${e.type} entry`));
    const inj = injectionBadge(msg);
    if (inj) head.append(inj);
    if (e.id === leaf) head.append(h("span", "dnb-badge dnb-leafmark", "leaf"));
    details.append(head);
    const table = h("dl", "dnb-kv");
    kv(table, "id", e.id);
    kv(table, "labels", namesOf(e.id).join(", "));
    kv(table, "parent", e.parent_id || "(root)");
    kv(table, "time", e.created_at);
    kv(table, "role", msg.role);
    kv(table, "injection", msg.injected || (e.type === "message" ? "none" : ""));
    kv(table, "origin", msg.origin && originLabel(msg.origin) !== msg.origin ? `${originLabel(msg.origin)} (${msg.origin})` : msg.origin);
    kv(table, "tool call id", msg.tool_call_id);
    kv(table, "tool", msg.tool_name);
    if (msg.role === "tool_result") kv(table, "error", msg.is_error ? "yes (the model was told the call failed)" : "no");
    kv(table, "model", msg.model);
    if (msg.usage) kv(table, "usage", JSON.stringify(msg.usage));
    if (msg.role === "assistant") kv(table, "cost", lineOf(e.id)?.row.cost || "");
    kv(table, "stop reason", msg.stop_reason);
    if (msg.settings) kv(table, "settings", JSON.stringify(msg.settings));
    const timing = msg.timing || {};
    kv(table, "duration", duration(timing.duration_ms));
    kv(table, "first token", duration(timing.ttft_ms));
    kv(table, "total time", duration(timing.total_ms));
    kv(table, "first kept", e.type === "compaction" ? e.first_kept_id || "(none: only what follows)" : "");
    kv(table, "tokens before", e.tokens_before);
    const line = lineOf(e.id);
    const r = line?.row;
    if (r && r.elides) kv(table, "elides", `${r.elides[2]} entries, ${r.elides[0]} … ${r.elides[1]}`);
    const on = line ? line.on : e.id === leaf;
    kv(table, "on active path", on ? "yes" : eph ? "no (ephemeral: off the chain)" : "no");
    if (line && unanswered(line, leaf)) kv(table, "reply", "none: its turn failed or was stopped; the next turn continues from before it (re-run its cell to retry)");
    details.append(table);
    if (e.type === "message") details.append(drawBlocks(msg.content, true));
    else if (e.type === "compaction") details.append(h("div", "dnb-text", e.summary));
    else if (e.data) details.append(h("pre", "dnb-pre", JSON.stringify(e.data, null, 2)));
    const actions = h("div", "dnb-actions");
    const cont = /** @type {HTMLButtonElement} */ (h("button", "dnb-action dnb-continue", "Continue from here"));
    cont.type = "button";
    cont.disabled = eph || e.id === leaf;
    cont.title = eph ? "An ephemeral entry is off the durable chain: you cannot branch to it." : e.id === leaf ? "This is already the leaf." : "Move the leaf here (branch): the next turn continues from this entry.";
    cont.addEventListener("click", () => {
      if (request(`continue from ${short(e.id)}`, () => model.get("leaf_id") === e.id || !!model.get("error"))) model.send({ action: "branch", id: e.id });
    });
    for (const [name, label] of [["model", "Model view here"], ["transcript", "Transcript here"]]) {
      const b = /** @type {HTMLButtonElement} */ (h("button", "dnb-action", label));
      b.type = "button";
      b.addEventListener("click", () => setView(name));
      actions.append(b);
    }
    const picked = picks.includes(e.id);
    const pickBtn = /** @type {HTMLButtonElement} */ (h("button", "dnb-action dnb-pick", picked ? "Unpick" : "Pick for compare"));
    pickBtn.type = "button";
    pickBtn.title = "Pick two or more entries (replies, or the leaves of branches), then Compare in the bar above.";
    pickBtn.addEventListener("click", () => togglePick(e.id));
    actions.append(pickBtn);
    actions.prepend(cont);
    details.append(actions);
  }

  /**
   * The "showing the last k of n" note with a button that asks Python for more.
   * @param {HTMLElement} panel @param {number} shown @param {number} total
   */
  function more(panel, shown, total) {
    if (shown >= total) return;
    const note = h("div", "dnb-more");
    note.append(h("span", "dnb-muted", `${total - shown} earlier not shown · `));
    const b = /** @type {HTMLButtonElement} */ (h("button", "dnb-action", "Show earlier"));
    b.type = "button";
    b.addEventListener("click", () => {
      const before = model.get("views");
      if (!request("earlier messages", () => model.get("views") !== before)) return;
      model.set("view_limit", (model.get("view_limit") || 200) * 4);
      model.save_changes();
    });
    note.append(b);
    panel.append(note);
  }

  /** Draw both views from Python's `views` (the toggle only shows/hides them). O(messages shown). */
  function drawViews() {
    const v = model.get("views") || {};
    const at = v.at ? `${short(v.at)}${v.following_leaf ? " (leaf)" : ""}` : "(empty)";
    modelPanel.replaceChildren();
    modelPanel.append(h("div", "dnb-view-head", `Model view at ${at}: the ${v.model_total ?? 0} messages the model receives (compaction applied, dangling tool calls repaired, injected context marked).`));
    more(modelPanel, (v.model || []).length, v.model_total || 0);
    const start = (v.model_total || 0) - (v.model || []).length;
    (v.model || []).forEach((/** @type {any} */ m, /** @type {number} */ i) => {
      const card = h("div", `dnb-card dnb-card-${m.role}`);
      if (m.injected) card.classList.add(`dnb-card-${m.injected}`);
      const head = h("div", "dnb-card-head");
      head.append(h("span", "dnb-index", `${start + i + 1}`), h("span", "dnb-label", m.role));
      const inj = injectionBadge(m);
      if (inj) head.append(inj);
      if (!m.entry_id) head.append(h("span", "dnb-badge dnb-synth", m.origin && m.origin.startsWith("compaction:") ? "compaction summary" : "synthesized"));
      else if (!m.injected && m.origin) head.append(h("span", "dnb-badge", originLabel(m.origin)));
      const res = resultBadge(m, `result for ${m.tool_call_id}`);
      if (res) head.append(res);
      if (m.entry_id) head.append(h("span", "dnb-id", short(m.entry_id)));
      card.append(head);
      if (m.role === "tool_result" && (model.get("hidden") || []).includes("tool_result")) {
        const fold = /** @type {HTMLDetailsElement} */ (h("details", "dnb-fold"));
        fold.append(h("summary", "", "result (collapsed: tool results are hidden)"), drawBlocks(m.content, true));
        card.append(fold);
      } else card.append(drawBlocks(m.content, true));
      modelPanel.append(card);
    });
    transcriptPanel.replaceChildren();
    transcriptPanel.append(h("div", "dnb-view-head", `Transcript view at ${at}: what a person reads (injected context and reminder blocks hidden; custom entries kept).`));
    more(transcriptPanel, (v.transcript || []).length, v.transcript_total || 0);
    for (const t of v.transcript || []) {
      const card = h("div", `dnb-card dnb-card-${t.role || t.type}`);
      const head = h("div", "dnb-card-head");
      head.append(h("span", "dnb-label", t.type === "message" ? t.role : t.type === "custom" ? `custom · ${t.kind}` : t.type));
      const res = resultBadge(t, `result of ${t.tool_name || "tool"}`);
      if (res) head.append(res);
      head.append(h("span", "dnb-id", short(t.id)));
      card.append(head);
      const thinking = (t.blocks || []).filter((/** @type {any} */ b) => b.type === "thinking");
      const calls = (t.blocks || []).filter((/** @type {any} */ b) => b.type === "tool_call");
      if (thinking.length) card.append(drawBlocks(thinking, false));
      if (t.type === "custom") {
        if (t.data) card.append(h("pre", "dnb-pre", t.data));
      } else if (t.text) card.append(h("div", "dnb-text", t.type === "compaction" ? `Summary: ${t.text}` : t.text));
      else if (!calls.length) card.append(h("div", "dnb-muted", "(no text)"));
      if (calls.length) card.append(drawBlocks(calls, false));
      transcriptPanel.append(card);
    }
    if (!(v.transcript || []).length) transcriptPanel.append(h("div", "dnb-muted", "Nothing for a reader here."));
  }

  function showView() {
    const view = model.get("view") || "tree";
    for (const [name, b] of Object.entries(tabButtons)) {
      b.classList.toggle("dnb-on", name === view);
      b.setAttribute("aria-pressed", String(name === view));
    }
    treePanel.hidden = view !== "tree";
    modelPanel.hidden = view !== "model";
    transcriptPanel.hidden = view !== "transcript";
    comparePanel.hidden = view !== "compare";
    tabButtons.compare.hidden = view !== "compare" && !Object.keys(model.get("comparison") || {}).length;
    if (view === "tree") paintRows();
  }

  function drawStatus() {
    const sel = model.get("selected_id") || "";
    const leaf = model.get("leaf_id") || "";
    const ro = model.get("read_only") || "";
    status.textContent = `${ro ? `read-only copy of ${ro} · ` : ""}${model.get("session_id") || ""} · ${tree.entries} entries · leaf ${short(leaf)}${sel ? ` · selected ${short(sel)}` : ""}`;
    status.classList.toggle("dnb-read-only", !!ro);
    follow.hidden = !sel;
    const whole = model.get("session_cost") || "";
    const here = (model.get("views") || {}).cost || "no replies";
    costLine.textContent = whole ? `tokens and cost · this branch${sel ? " up to the selected entry" : ""}: ${here} · whole session: ${whole}` : "";
    costLine.hidden = !whole;
    const err = stale || model.get("error") || "";
    error.textContent = err;
    error.hidden = !err;
    error.classList.toggle("dnb-stale", !!stale);
    if (stale) notice.hidden = true;
  }

  let queued = false;
  /** Batch every change of one update message into one redraw. */
  function refresh() {
    if (queued) return;
    queued = true;
    queueMicrotask(() => {
      queued = false;
      const leaf = model.get("leaf_id") || "";
      showView();
      if (firstPaint || leaf !== lastLeaf) reveal(model.get("selected_id") || leaf);
      if (firstPaint) {
        // `el` may not be laid out yet: reveal again once it is.
        requestAnimationFrame(() => {
          reveal(model.get("selected_id") || model.get("leaf_id") || "");
          paintRows();
        });
      }
      firstPaint = false;
      lastLeaf = leaf;
      paintRows();
      const views = model.get("views");
      const hidden = model.get("hidden") || [];
      if (views !== seenViews || hidden !== seenHidden) drawViews(); // views are redrawn only when Python sent new ones
      seenViews = views;
      seenHidden = hidden;
      for (const [g, box] of Object.entries(filterBoxes)) box.checked = hidden.includes(g);
      const comparison = model.get("comparison");
      if (comparison !== seenComparison) drawCompare(comparePanel, comparison, clearComparison);
      seenComparison = comparison;
      drawPicks();
      drawFind();
      drawDetails();
      drawStatus();
      settle();
    });
  }

  model.on("change:tree", onTree);
  model.on("msg:custom", onCustom);
  const keys = ["leaf_id", "elided", "selected_id", "views", "error", "session_id", "view", "labels", "comparison", "hidden", "read_only", "session_cost"];
  const handlers = keys.map((k) => {
    const cb = () => refresh();
    model.on(`change:${k}`, cb);
    return /** @type {[string, () => void]} */ ([`change:${k}`, cb]);
  });
  refresh();
  return () => {
    for (const [ev, cb] of handlers) model.off(ev, cb);
    model.off("change:tree", onTree);
    model.off("msg:custom", onCustom);
    model.off("comm_live_update", onCommLive);
    if (k0 && k0.statusChanged) k0.statusChanged.disconnect(onStatus);
    if (pending) clearTimeout(pending.timer);
    clearTimeout(linesTimer);
    clearTimeout(findTimer);
  };
}

export default { render };
