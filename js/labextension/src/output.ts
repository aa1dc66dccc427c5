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
 * The live widget asks its kernel for a fresh fallback after the session changed and hands it up
 * as a bubbling FALLBACK_EVENT (js/widget/src/snapshot.ts); this renderer writes it into its output,
 * so the saved notebook (and nbconvert) shows the session as it was when saved. Nothing is rendered
 * for an untrusted output (the renderer is not safe): JupyterLab then shows the sanitised text/html.
 */
import type { NotebookPanel } from '@jupyterlab/notebook';
import { OutputArea } from '@jupyterlab/outputarea';
import { MimeModel, type IOutputModel, type IRenderMimeRegistry } from '@jupyterlab/rendermime';
import type { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import { Panel, Widget } from '@lumino/widgets';

export const OUTPUT_MIME = 'application/vnd.durable-nb.widget+json';
export const WIDGET_MIME = 'application/vnd.jupyter.widget-view+json';
export const FALLBACK_EVENT = 'durable-nb-fallback';
export const NOTICE = 'The session as it was saved (no script). Run %durable show for the live widget.';
const RANK = -20; // ahead of ipywidgets' widget view (-10)
const RECHECK_MS = 1000; // while static: is there a newer widget-view factory (ipywidgets' manager arrived)?
const RECHECK_FOR_MS = 60_000;

/** Register the renderer with a notebook's own registry (where ipywidgets registers its view). */
export function addOutputRenderer(panel: NotebookPanel): void {
  const rm = panel.content.rendermime;
  rm.addFactory({ safe: false, mimeTypes: [OUTPUT_MIME], createRenderer: () => new SessionOutput(rm) }, RANK);
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

  constructor(private readonly rm: IRenderMimeRegistry) {
    super();
    this.addClass('durable-nb-output');
    this.node.addEventListener(FALLBACK_EVENT, this.onFallback as EventListener);
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
        outputs.set(i, { ...json, data: { ...json.data, 'text/html': html, 'text/plain': text } } as never);
        return;
      }
    }
  };

  dispose(): void {
    if (this.isDisposed) return;
    this.stopLive();
    this.node.removeEventListener(FALLBACK_EVENT, this.onFallback as EventListener);
    super.dispose();
  }
}
