/**
 * What the panels share: the model, the line cache and the tree's revision, the kernel link, the
 * picks for a comparison, the find's hits, and the few drawing hooks one panel offers the others
 * (the tree panel paints rows and reveals entries; the toolbar draws the status, picks and find).
 */
import { h } from "./dom";
import { short } from "./format";
import { Kernel } from "./kernel";
import { Lines } from "./lines";
import type { Line, Model, Hit, Tree, View, Views } from "./protocol";
import { SyncedViews } from "./viewsync";

/** The find's state: the query answered, the one asked, the hits in drawn order and the current one. */
export interface Found {
  query: string;
  asked: string;
  total: number;
  hits: Hit[];
  at: number;
}

/** Drawing hooks a panel fills in for the others (no-ops until it does). */
export interface Hooks {
  paintRows(): void;
  reveal(id: string): void;
  scrollTo(i: number): void;
  drawDetails(): void;
  drawStatus(): void;
  drawPicks(): void;
  drawFind(): void;
  showView(): void;
  /** ask for the find's hits again (the tree changed), keeping the current hit */
  searchAgain(): void;
  refresh(): void;
}

const none = () => {};

export class Ctx {
  readonly root = h("div", "dnb-widget");
  readonly notice = h("div", "dnb-notice");
  readonly cache = new Lines();
  readonly kernel: Kernel;
  readonly synced: SyncedViews;
  tree: Tree;
  picks: string[] = [];
  found: Found = { query: "", asked: "", total: 0, hits: [], at: -1 };
  hitRows = new Set<string>(); // the drawn rows that hold (or stand in for) a hit
  readonly hooks: Hooks = {
    paintRows: none,
    reveal: none,
    scrollTo: none,
    drawDetails: none,
    drawStatus: none,
    drawPicks: none,
    drawFind: none,
    showView: none,
    searchAgain: none,
    refresh: none,
  };
  private labelsSeen: Record<string, string> | undefined = undefined;
  private names = new Map<string, string[]>();

  constructor(readonly model: Model) {
    this.notice.hidden = true;
    this.root.classList.toggle("dnb-offline", !!model.offline); // widget.css hides the kernel actions
    this.tree = model.get("tree") || { rev: 0, lines: 0, entries: 0, changed_from: 0, leaf_line: -1 };
    this.cache.rev = this.tree.rev;
    this.synced = new SyncedViews(model);
    this.kernel = new Kernel(model, this.notice, () => {
      this.root.classList.add("dnb-is-stale");
      this.hooks.drawStatus();
      this.hooks.drawDetails();
    });
  }

  /** The `views` trait as the "views" replies keep it ({} before Python sent one; viewsync.ts). */
  views(): Partial<Views> {
    return this.synced.current();
  }

  /**
   * The leaf as a person sees it, where the leaf badge is: the agent's leaf, or above a bookkeeping entry
   * (a label appended at the leaf is no line) the entry Python drew on the leaf's line (`tree.leaf_line`);
   * while following the leaf, the entry the views are at (Python moved them there).
   */
  leaf(): string {
    const v = this.views();
    if (!this.selected() && v.following_leaf && v.at) return v.at;
    const line = this.tree.leaf_line >= 0 ? this.cache.at.get(this.tree.leaf_line) : undefined;
    return (line && line.row.id) || this.model.get("leaf_id") || "";
  }

  selected(): string {
    return this.model.get("selected_id") || "";
  }

  /** The label names on entry `id` (the `labels` trait is {name: entry id}). */
  namesOf(id: string): string[] {
    const labels = this.model.get("labels") || {};
    if (labels !== this.labelsSeen) {
      this.labelsSeen = labels;
      this.names = new Map();
      for (const [name, target] of Object.entries(labels)) this.names.set(String(target), [...(this.names.get(String(target)) || []), name]);
    }
    return this.names.get(id) || [];
  }

  /** The line index of entry `id`, when known here. */
  indexOf(id: string): number | undefined {
    const i = this.cache.index.get(id);
    if (i !== undefined) return i;
    if (id && id === this.leaf() && this.tree.leaf_line >= 0) return this.tree.leaf_line;
    return undefined;
  }

  /** Select entry `id` ("" follows the leaf): the views move there (Python computes them). */
  select(id: string): void {
    if (!this.kernel.request(`entry ${short(id)}`, () => !id || this.views().at === id)) {
      this.hooks.paintRows();
      return;
    }
    this.model.set("selected_id", id);
    this.model.save_changes();
    this.hooks.paintRows();
    this.hooks.drawDetails();
  }

  /** Show the panel `name`. */
  setView(name: View): void {
    this.model.set("view", name);
    this.model.save_changes();
    this.hooks.showView();
  }

  /** Pick entry `id` for a comparison, or unpick it. */
  togglePick(id: string): void {
    this.picks = this.picks.includes(id) ? this.picks.filter((x) => x !== id) : [...this.picks, id];
    this.drawPicked();
  }

  clearPicks(): void {
    this.picks = [];
    this.drawPicked();
  }

  private drawPicked(): void {
    this.hooks.drawPicks();
    this.hooks.paintRows();
    this.hooks.drawDetails();
  }

  /** A user message that starts a turn (Python's `turn`) and no entry answers, other than the leaf: a failed or stopped turn. */
  unanswered(line: Line, leaf: string): boolean {
    return !!line.row.turn && line.row.id !== leaf && !line.kids;
  }
}
