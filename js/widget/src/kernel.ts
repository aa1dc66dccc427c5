/**
 * The kernel behind this view: requests time out with a message, a restart or a dead kernel is said
 * at once. `request(what, check)` sends nothing and says why when the view is stale; otherwise it
 * remembers what answers the request: after FIRST_CHECK_MS without an answer the notice says why
 * (kernel gone) or that it waits, after GIVE_UP_MS that no answer came.
 */
import type { Model } from "./protocol";

export const FIRST_CHECK_MS = 600;
export const GIVE_UP_MS = 15000;
export const RESTARTED = "this view belongs to a kernel that was restarted — run %durable show";
export const GONE = "this view's kernel is gone (shut down or dead) — start one and run %durable show";

/** What ipywidgets' kernel connection offers that this view reads (any of it may be absent). */
interface KernelLike {
  isDisposed?: boolean;
  status?: string;
  connectionStatus?: string;
  statusChanged?: {
    connect(cb: (sender: unknown, status: string) => void): void;
    disconnect(cb: (sender: unknown, status: string) => void): void;
  };
}

interface Pending {
  what: string;
  check: () => boolean;
  started: number;
  timer: ReturnType<typeof setTimeout> | undefined;
}

export class Kernel {
  /** Why this view can get no answer, once it cannot ("" until then). */
  stale = "";
  private pending: Pending | null = null;
  private readonly k0: KernelLike | null;
  private readonly onCommLive = () => this.markStale(RESTARTED);
  private readonly onStatus = (_: unknown, status: string) => {
    if (status === "restarting" || status === "autorestarting") this.markStale(RESTARTED);
    else if (status === "dead") this.markStale(GONE);
  };

  /** `notice` shows the waiting messages; `onStale(why)` redraws what says the view is stale. */
  constructor(
    private readonly model: Model,
    private readonly notice: HTMLElement,
    private readonly onStale: () => void,
  ) {
    // A restart (ipywidgets marks every model's comm dead) or a dying kernel makes this view stale.
    model.on("comm_live_update", this.onCommLive);
    this.k0 = this.kernel();
    this.k0?.statusChanged?.connect(this.onStatus);
  }

  private kernel(): KernelLike | null {
    const manager = (this.model as unknown as { widget_manager?: { kernel?: KernelLike } }).widget_manager;
    return manager?.kernel ?? null;
  }

  /** Why this view can get no answer ("" if it can, or if the host does not say). */
  staleReason(): string {
    if (this.stale) return this.stale;
    const k = this.kernel();
    if (k && (k.isDisposed || k.status === "dead" || k.connectionStatus === "disconnected")) return GONE;
    return "";
  }

  markStale(why: string): void {
    if (this.stale) return;
    this.stale = why;
    this.pending = null;
    this.onStale();
  }

  /** Whether to send the request `what`, answered once `check()` holds (see the module doc). */
  request(what: string, check: () => boolean): boolean {
    const why = this.staleReason();
    if (why) {
      this.markStale(why);
      this.onStale();
      return false;
    }
    if (this.pending) clearTimeout(this.pending.timer);
    const pending: Pending = { what, check, started: Date.now(), timer: undefined };
    this.pending = pending;
    const notice = this.notice;
    const tick = (): void => {
      if (this.pending !== pending) return;
      if (pending.check()) return this.settle();
      const gone = this.staleReason();
      if (gone) return this.markStale(gone);
      const waited = Date.now() - pending.started;
      notice.hidden = false;
      if (waited >= GIVE_UP_MS) {
        notice.textContent = `no answer from the kernel after ${Math.round(waited / 1000)} s (${pending.what}): it is busy or gone — run %durable show for a fresh view`;
        this.pending = null;
        return;
      }
      notice.textContent = `waiting for the kernel (${pending.what}): it is busy running a cell…`;
      pending.timer = setTimeout(tick, 500);
    };
    pending.timer = setTimeout(tick, FIRST_CHECK_MS);
    return true;
  }

  /** The pending request was answered (or there was none): hide the notice. */
  settle(): void {
    if (this.pending && !this.pending.check()) return;
    if (this.pending) clearTimeout(this.pending.timer);
    this.pending = null;
    this.notice.hidden = true;
    this.notice.textContent = "";
  }

  dispose(): void {
    this.model.off("comm_live_update", this.onCommLive);
    this.k0?.statusChanged?.disconnect(this.onStatus);
    if (this.pending) clearTimeout(this.pending.timer);
  }
}
