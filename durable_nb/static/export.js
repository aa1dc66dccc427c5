// durable_nb exported page: a read-only stand-in for anywidget's model.
//
// durable_nb.share.page inlines widget.js and then this file into ONE module
// script of a self-contained page, so `render` below is widget.js's own. The
// data (every line of the tree as Python laid it out, and the views Python
// computed at each embedded entry, their items stored once in `items`) is the
// JSON of <script id="dnb-data">. This stand-in answers the widget's requests
// ("lines", "locate") from it, marking the active path of the page's leaf.
// Nothing here computes a layout or a view, fetches anything or writes
// anywhere: a selection looks the views up; "continue from here" moves this
// page's leaf (navigation only).
{
  const t0 = performance.now(); // first paint is timed from here (the data parsed, the tree drawn, two frames)
  const data = JSON.parse(/** @type {HTMLElement} */ (document.getElementById("dnb-data")).textContent || "{}");
  /** @type {Record<string, any>} */ const state = data.state;
  /** @type {any[]} */ const items = data.items;
  /** @type {Map<string, Set<Function>>} */ const listeners = new Map();
  /** @type {any[]} */ const lines = data.lines;
  /** @type {Map<string, number>} */ const index = new Map();
  /** @type {Map<string, any>} */ const rows = new Map();
  lines.forEach((l, i) => {
    if (l.row.id && !index.has(l.row.id)) index.set(l.row.id, i);
    if (l.row.id) rows.set(l.row.id, l.row);
  });
  const ephemeral = new Set([...rows.values()].filter((r) => r.injected === "ephemeral").map((r) => r.id));
  /** @type {{ leaf: string, at: Map<string, number> }} */ let active = { leaf: "\u0000", at: new Map() };
  /** The active path of the page's leaf: id -> place from the root (cycle-safe). */
  function activePath() {
    if (active.leaf === state.leaf_id) return active.at;
    /** @type {string[]} */ const ids = [];
    let cur = rows.get(state.leaf_id);
    while (cur && !ids.includes(cur.id)) {
      ids.push(cur.id);
      cur = cur.parent_id ? rows.get(cur.parent_id) : undefined;
    }
    ids.reverse();
    active = { leaf: state.leaf_id, at: new Map(ids.map((id, k) => [id, k])) };
    return active.at;
  }
  /** @param {any} l a line, marked for the page's leaf */
  function mark(l) {
    if (!l.row.id) return l;
    const k = activePath().get(l.row.id);
    return { ...l, on: k !== undefined, elided: k !== undefined && k < (state.elided || 0) };
  }
  /** Answer like the kernel does: later, as a custom message. @param {any} content */
  function reply(content) {
    setTimeout(() => {
      for (const cb of [...(listeners.get("msg:custom") || [])]) cb(content, []);
    }, 0);
  }

  /** @param {string} key */
  const fire = (key) => {
    for (const cb of [...(listeners.get(`change:${key}`) || [])]) cb();
  };
  state.tree = { ...state.tree };

  /**
   * The `views` value at entry `at`, as SessionWidget would send it (at most `limit` items of each view).
   * @param {string} at @param {boolean} following @param {number} limit
   */
  function viewsAt(at, following, limit) {
    const v = data.views[at];
    const entry = data.entries[at] || null;
    if (!v) return { at, following_leaf: following, depth: 0, model: [], model_total: 0, transcript: [], transcript_total: 0, entry };
    const [model, modelTotal, transcript, transcriptTotal, depth, , cost] = v;
    const take = (/** @type {number[]} */ refs) => refs.slice(-Math.max(1, limit)).map((i) => items[i]);
    return { at, following_leaf: following, depth, model: take(model), model_total: modelTotal, transcript: take(transcript), transcript_total: transcriptTotal, entry, cost: cost || "" };
  }

  function update() {
    const at = state.selected_id || state.leaf_id;
    state.views = viewsAt(at, !state.selected_id, state.view_limit);
    const v = data.views[at];
    state.error = !at ? "" : !v ? data.notes.missing.replace("{id}", at.slice(0, 8))
      : state.view_limit > v[0].length && (v[1] > v[0].length || v[3] > v[2].length) ? data.notes.limit : "";
    fire("views");
    fire("error");
  }

  const model = {
    get: (/** @type {string} */ key) => state[key],
    set: (/** @type {string} */ key, /** @type {any} */ value) => {
      if (state[key] === value) return;
      state[key] = value;
      fire(key);
      if (key === "selected_id" || key === "view_limit") update();
    },
    on: (/** @type {string} */ ev, /** @type {Function} */ cb) => {
      if (!listeners.has(ev)) listeners.set(ev, new Set());
      /** @type {Set<Function>} */ (listeners.get(ev)).add(cb);
    },
    off: (/** @type {string} */ ev, /** @type {Function} */ cb) => {
      if (ev && cb) listeners.get(ev)?.delete(cb);
      else if (ev) listeners.delete(ev);
      else listeners.clear();
    },
    save_changes: () => {},
    send: (/** @type {any} */ msg) => {
      if (msg && msg.action === "lines") {
        const start = Math.max(0, Number(msg.start) || 0);
        const stop = Math.min(Number(msg.stop) || 0, start + 400);
        return reply({ reply: "lines", rev: state.tree.rev, start, total: lines.length, lines: lines.slice(start, stop).map(mark) });
      }
      if (msg && msg.action === "locate") {
        const i = index.get(String(msg.id));
        return reply({ reply: "locate", id: msg.id, rev: state.tree.rev, index: i ?? -1, drawn: i === undefined ? "" : msg.id });
      }
      if (!msg || msg.action !== "branch" || ephemeral.has(msg.id) || !(msg.id in data.entries)) return;
      state.leaf_id = String(msg.id);
      state.selected_id = "";
      state.elided = data.views[msg.id] ? data.views[msg.id][5] : 0; // what a compaction on the new path elides (known where its views are)
      state.tree = { ...state.tree, rev: state.tree.rev + 1, changed_from: 0, leaf_line: index.get(state.leaf_id) ?? -1 }; // the active path moved
      fire("tree");
      fire("leaf_id");
      fire("elided");
      fire("selected_id");
      update();
    },
  };

  update();
  render({ model, el: /** @type {HTMLElement} */ (document.getElementById("dnb-root")) });
  requestAnimationFrame(() =>
    requestAnimationFrame(() => {
      /** @type {any} */ (window).__dnbFirstPaintMs = performance.now() - t0; // read by benchmarks/export_bench.py
    }),
  );
}
