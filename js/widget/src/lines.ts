/** The line cache: the lines of the tree Python sent, by index, for one layout revision. No DOM. */
import type { Line } from "./protocol";

export const MAX_CACHE = 1500; // lines kept; the farthest from the window are dropped

/** A window of the tree (what is drawn plus a margin), never the whole of it. */
export class Lines {
  readonly at = new Map<number, Line>();
  readonly index = new Map<string, number>();
  asked: [number, number][] = []; // ranges requested at this revision
  inflight: [number, number][] = []; // ranges requested and not answered yet, at any revision
  rev = -1;

  constructor(readonly max: number = MAX_CACHE) {}

  /** Forget the lines from index `from` on (all when 0) but those in `kept` ([lo, hi)), and what was asked. */
  dropFrom(from: number, kept?: number[]): void {
    const [lo, hi] = kept && kept.length === 2 ? kept : [0, 0];
    for (const [i, line] of this.at) {
      if (i < from || (i >= lo && i < hi)) continue;
      this.forget(i, line);
    }
    this.asked = [];
  }

  /** Keep `lines` at indices `start`, `start + 1`, ..., skipping the indices of `skip` ([lo, hi)). */
  put(start: number, lines: Line[], skip?: number[]): void {
    const [lo, hi] = skip && skip.length === 2 ? skip : [0, 0];
    lines.forEach((line, k) => {
      const i = start + k >= lo && hi > lo ? start + k + (hi - lo) : start + k;
      const old = this.at.get(i);
      if (old && this.index.get(old.row.id) === i) this.index.delete(old.row.id);
      this.at.set(i, line);
      this.index.set(line.row.id, i);
    });
  }

  /** Keep at most `max` lines, the nearest to index `around`. O(cached lines log cached lines) when over. */
  trim(around: number): void {
    if (this.at.size <= this.max) return;
    const far = [...this.at.keys()].sort((a, b) => Math.abs(b - around) - Math.abs(a - around));
    for (const i of far.slice(0, this.at.size - this.max)) this.forget(i, this.at.get(i) as Line);
    this.asked = [];
  }

  /** Note a request for [lo, hi). It stays in flight across revisions until answered: Python
   * answers at its revision then (a busy kernel after its cell), which is the page's by the time
   * the reply arrives, so asking again at every revision of a turn would fetch the same lines twice. */
  sent(lo: number, hi: number): void {
    this.asked.push([lo, hi]);
    this.inflight.push([lo, hi]);
  }

  /** A lines reply starting at `start` arrived: whether it answered a request in flight (now not). */
  answered(start: number): boolean {
    const n = this.inflight.length;
    this.inflight = this.inflight.filter(([a]) => a !== start);
    return this.inflight.length < n;
  }

  /** Whether line `i` was asked for at this revision, or is in a request not answered yet. */
  pending(i: number): boolean {
    const within = ([a, b]: [number, number]) => i >= a && i < b;
    return this.asked.some(within) || this.inflight.some(within);
  }

  /** The cached line of entry `id`. */
  lineOf(id: string): Line | undefined {
    const i = this.index.get(id);
    return i === undefined ? undefined : this.at.get(i);
  }

  /** The first range within [a, b) neither cached nor asked for: [lo, hi), or null when none. */
  missing(a: number, b: number): [number, number] | null {
    let lo = -1;
    let hi = -1;
    for (let i = a; i < b; i++) {
      if (this.at.has(i) || this.pending(i)) continue;
      if (lo < 0) lo = i;
      hi = i + 1;
    }
    return lo < 0 ? null : [lo, hi];
  }

  private forget(i: number, line: Line): void {
    this.at.delete(i);
    if (this.index.get(line.row.id) === i) this.index.delete(line.row.id);
  }
}
