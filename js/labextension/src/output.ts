/**
 * A session widget's output in a notebook: the saved, script-free view first, the live widget once its
 * model is there.
 *
 * SessionWidget's output carries the widget view, the static fallback (text/html, text/plain) and
 * OUTPUT_MIME. This renderer (ahead of ipywidgets' widget view) shows the fallback with one line
 * saying to run `%durable show`, and renders the widget view beside it, hidden: as soon as the
 * widget draws (its model is in the kernel: a fresh output, or a page reloaded with the kernel still
 * running) the fallback goes away. A reopened notebook whose kernel was restarted has no model:
 * ipywidgets' "Error displaying widget: model not found" stays hidden and the fallback stays.
 *
 * The saved notebook (and nbconvert) shows the session as it was when saved: as the notebook is
 * saved (`keepFallbacks`: the document context's save and save-as wait for it, at most ANSWER_MS),
 * each live widget whose session changed since its last fallback asks its kernel for a fresh one
 * (a SAVE_EVENT on the widget's root; js/widget/src/snapshot.ts) and hands it up as a bubbling
 * FALLBACK_EVENT; this renderer writes it into its output before the notebook is serialised. A
 * display that carried a short fallback (`"fallback": "short"` in OUTPUT_MIME: the kernel sends one
 * only to a page that said it saves the whole one, ./page.ts) asks for the whole one once, after the
 * widget drew. A turn sends no fallback (nothing is asked until a save). Nothing is rendered for
 * an untrusted output (the renderer is not safe): JupyterLab then shows the sanitised text/html.
 */
import type { DocumentRegistry } from '@jupyterlab/docregistry';
import type { NotebookPanel } from '@jupyterlab/notebook';
import { OutputArea } from '@jupyterlab/outputarea';
import { MimeModel, type IOutputModel, type IRenderMimeRegistry } from '@jupyterlab/rendermime';
import type { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import { Panel, Widget } from '@lumino/widgets';

export const OUTPUT_MIME = 'application/vnd.durable-nb.widget+json';
export const WIDGET_MIME = 'application/vnd.jupyter.widget-view+json';
export const FALLBACK_EVENT = 'durable-nb-fallback';
export const SAVE_EVENT = 'durable-nb-want-fallback'; // js/widget/src/snapshot.ts answers it
const ANSWER_MS = 5000; // a save waits at most this long for the widgets' fresh fallbacks
const SHORT_AFTER_MS = 1500; // a short fallback is replaced this long after the widget drew
export const NOTICE = 'The session as it was saved (no script). Run %durable show for the live widget.';
const RANK = -20; // ahead of ipywidgets' widget view (-10)
const RECHECK_MS = 1000; // while static: is there a newer widget-view factory (ipywidgets' manager arrived)?
const RECHECK_FOR_MS = 60_000;

/** Register the renderer with a notebook's own registry (where ipywidgets registers its view), and
 * make the notebook's saves write each live widget's fresh fallback into its output first. */
export function addOutputRenderer(panel: NotebookPanel): void {
  const rm = panel.content.rendermime;
  const shown = new Set<SessionOutput>();
  rm.addFactory({ safe: false, mimeTypes: [OUTPUT_MIME], createRenderer: () => new SessionOutput(rm, shown) }, RANK);
  keepFallbacks(panel.context, shown);
}

/** Wrap `context`'s save and save-as (autosave and Ctrl+S call them; JupyterLab has no awaited
 * hook before it serialises the model) so each live widget in `shown` first refreshes its output's
 * fallback. A busy kernel is not waited for: its widget's answer is written when it comes. */
export function keepFallbacks(context: DocumentRegistry.Context, shown: Set<SessionOutput>): void {
  const before = async (): Promise<void> => {
    const busy = context.sessionContext.session?.kernel?.status === 'busy';
    const asked = Array.from(shown, o => o.refreshFallback());
    if (!busy && asked.length) await Promise.race([Promise.all(asked), wait(ANSWER_MS)]);
  };
  const save = context.save.bind(context);
  const saveAs = context.saveAs.bind(context);
  context.save = async () => {
    await before();
    return save();
  };
  context.saveAs = async () => {
    await before();
    return saveAs();
  };
}

function wait(ms: number): Promise<void> {
  return new Promise(resolve => setTimeout(resolve, ms));
}

function modelId(model: IRenderMime.IMimeModel): string {
  const view = model.data[WIDGET_MIME] as { model_id?: string } | undefined;
  return String(view?.model_id ?? '');
}

/** The fallback and the widget view of one output; see the module doc. */
export class SessionOutput extends Panel implements IRenderMime.IRenderer {
  private model: IRenderMime.IMimeModel | null = null;
  private saved: Widget | null = null; // the notice and the fallback
  private savedHtml = '';
  private live: IRenderMime.IRenderer | null = null; // ipywidgets' renderer of the widget view
  private liveFactory: unknown = null;
  private observer: MutationObserver | null = null;
  private timer: ReturnType<typeof setInterval> | undefined;
  private shortTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly rm: IRenderMimeRegistry,
    private readonly shown: Set<SessionOutput> = new Set()
  ) {
    super();
    this.addClass('durable-nb-output');
    this.node.addEventListener(FALLBACK_EVENT, this.onFallback as EventListener);
    shown.add(this);
  }

  /** Ask the live widget for a fresh fallback (written into this output by onFallback); settled
   * once written, at once when the widget is not live or its session did not change since. */
  refreshFallback(): Promise<void> {
    const root = this.isLive() ? this.live?.node.querySelector('.dnb-widget') : null;
    if (!root) return Promise.resolve();
    let done: Promise<void> = Promise.resolve();
    const detail = { wait: (p: Promise<void>) => (done = p) };
    root.dispatchEvent(new CustomEvent(SAVE_EVENT, { bubbles: true, detail }));
    return done;
  }

  /** Whether this output's fallback is the short one (the kernel knew this page saves the whole one). */
  private isShort(): boolean {
    const own = this.model?.data[OUTPUT_MIME] as { fallback?: unknown } | undefined;
    return own?.fallback === 'short';
  }

  async renderModel(model: IRenderMime.IMimeModel): Promise<void> {
    const again = this.model !== null && modelId(this.model) === modelId(model);
    this.model = model;
    if (!again) this.startLive();
    await this.drawSaved();
  }

  /** Whether the widget view drew (ipywidgets puts the view's node in; an error is only text). */
  isLive(): boolean {
    return !!this.live && !this.live.isDisposed && !this.live.isHidden && this.live.node.childElementCount > 0;
  }

  private startLive(): void {
    this.stopLive();
    const factory = this.rm.getFactory(WIDGET_MIME);
    if (!factory || !this.model || !modelId(this.model)) return;
    const live = this.rm.createRenderer(WIDGET_MIME);
    live.addClass('durable-nb-pending');
    this.live = live;
    this.liveFactory = factory;
    this.addWidget(live);
    this.observer = new MutationObserver(() => void this.drawSaved());
    this.observer.observe(live.node, { childList: true });
    void live.renderModel(this.model);
    // Until ipywidgets' manager is ready its factory makes placeholders that never draw: when the
    // registry gets the real one, render again with it.
    const started = Date.now();
    this.timer = setInterval(() => {
      if (this.isLive() || Date.now() - started > RECHECK_FOR_MS) clearInterval(this.timer);
      else if (this.rm.getFactory(WIDGET_MIME) !== this.liveFactory) this.startLive();
    }, RECHECK_MS);
  }

  private stopLive(): void {
    clearInterval(this.timer);
    this.observer?.disconnect();
    this.observer = null;
    this.live?.dispose();
    this.live = null;
  }

  /** Show the fallback unless the widget is live (then show the widget and drop the fallback). */
  private async drawSaved(): Promise<void> {
    const live = this.isLive();
    this.live?.toggleClass('durable-nb-pending', !live);
    if (live && this.isShort() && this.shortTimer === undefined) {
      this.shortTimer = setTimeout(() => void this.refreshFallback(), SHORT_AFTER_MS);
    }
    if (live || !this.model) {
      this.saved?.dispose();
      this.saved = null;
      this.savedHtml = '';
      return;
    }
    const html = String(this.model.data['text/html'] ?? '');
    if (this.saved && html === this.savedHtml) return;
    const saved = new Panel();
    saved.addClass('durable-nb-saved');
    const notice = new Widget();
    notice.addClass('durable-nb-saved-notice');
    notice.node.textContent = NOTICE;
    saved.addWidget(notice);
    if (html) {
      const r = this.rm.createRenderer('text/html');
      saved.addWidget(r);
      await r.renderModel(new MimeModel({ data: { 'text/html': html }, trusted: this.model.trusted }));
    }
    this.saved?.dispose();
    this.saved = saved;
    this.savedHtml = html;
    this.insertWidget(0, saved);
  }

  /** The live widget's fresh fallback: write it into this output (a notebook saved now keeps it). */
  private readonly onFallback = (ev: CustomEvent<{ html?: unknown; text?: unknown }>): void => {
    ev.stopPropagation();
    const { html, text } = ev.detail || {};
    const model = this.model as IOutputModel | null;
    if (!model || typeof html !== 'string' || typeof text !== 'string' || model.data['text/html'] === html) return;
    let area: Widget | null = this.parent;
    while (area && !(area instanceof OutputArea)) area = area.parent;
    if (!area) return;
    const outputs = (area as OutputArea).model;
    for (let i = 0; i < outputs.length; i++) {
      if (outputs.get(i) === model) {
        const json = model.toJSON() as { data?: Record<string, unknown> };
        const own = { ...(json.data?.[OUTPUT_MIME] as object | undefined) } as Record<string, unknown>;
        delete own.fallback; // whole now
        const data = { ...json.data, 'text/html': html, 'text/plain': text, [OUTPUT_MIME]: own };
        outputs.set(i, { ...json, data } as never);
        return;
      }
    }
  };

  dispose(): void {
    if (this.isDisposed) return;
    clearTimeout(this.shortTimer);
    this.shown.delete(this);
    this.stopLive();
    this.node.removeEventListener(FALLBACK_EVENT, this.onFallback as EventListener);
    super.dispose();
  }
}
