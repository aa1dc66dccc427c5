/**
 * `%%durable` cells are prose: their editor highlights them as Markdown, not as the kernel's language.
 *
 * A code cell's editor language follows its model's `mimeType`, which the notebook sets from the
 * kernel's language (on insert and on every kernel change). For a cell whose source starts with
 * `%%durable` this sets the Markdown type (`text/x-markdown`, CodeMirror's Markdown language)
 * and sets it again whenever the notebook resets it; a cell that stops starting with `%%durable` gets
 * the kernel's type back. The source, its execution and the saved file are untouched.
 *
 * The editor loads a language asynchronously on each change and the last load to finish wins, so a
 * first (slow) load of the kernel's language could land after Markdown's: once both are loaded
 * (`languages`, the editor's registry), the type is set again, and Markdown's load is the last.
 */
import type { Cell } from '@jupyterlab/cells';
import type { IEditorLanguageRegistry } from '@jupyterlab/codemirror';
import type { Notebook } from '@jupyterlab/notebook';

export const PROSE_MIME = 'text/x-markdown';
const MAGIC = /^\s*%%durable\b/;

/** True when a cell's source is a `%%durable` cell (its first non-blank text is the magic). */
export function isDurableCell(source: string): boolean {
  return MAGIC.test(source);
}

const DEFAULT_MIME = 'text/x-ipython';
const watched = new WeakSet<Cell>();
const kernelMime = new WeakMap<Cell, string>();
const settling = new WeakSet<Cell>();

function apply(cell: Cell, languages: IEditorLanguageRegistry | null): void {
  const model = cell.model;
  if (model.type !== 'code') return;
  const prose = isDurableCell(model.sharedModel.getSource());
  if (prose && model.mimeType !== PROSE_MIME) {
    kernelMime.set(cell, model.mimeType);
    model.mimeType = PROSE_MIME;
    settle(cell, languages);
  } else if (!prose && model.mimeType === PROSE_MIME) {
    model.mimeType = kernelMime.get(cell) || DEFAULT_MIME;
  }
}

/** Once both languages are loaded, set the kernel's type and Markdown again (Markdown's load is then the last). */
function settle(cell: Cell, languages: IEditorLanguageRegistry | null): void {
  if (languages === null || settling.has(cell)) return;
  settling.add(cell);
  const kernel = kernelMime.get(cell) || DEFAULT_MIME;
  const again = () => {
    if (cell.model.mimeType === PROSE_MIME && !cell.isDisposed) {
      cell.model.mimeType = kernel; // the mimeTypeChanged handler sets Markdown back at once
    }
    settling.delete(cell);
  };
  void Promise.all([languages.getLanguage(kernel), languages.getLanguage(PROSE_MIME)])
    .catch(() => undefined)
    .then(() => setTimeout(again, 50));
}

/** Keep every `%%durable` cell of `notebook` highlighted as Markdown as cells, sources and kernels
 * change (`languages`: the editor's language registry, when the app has one). */
export function watchProse(notebook: Notebook, languages: IEditorLanguageRegistry | null = null): void {
  const attach = () => {
    for (const cell of notebook.widgets) {
      if (!watched.has(cell)) {
        watched.add(cell);
        cell.model.sharedModel.changed.connect(() => apply(cell, languages));
        cell.model.mimeTypeChanged.connect((_, change) => {
          if (change.newValue !== PROSE_MIME) kernelMime.set(cell, change.newValue);
          apply(cell, languages);
        });
      }
      apply(cell, languages);
    }
  };
  notebook.model?.cells.changed.connect(() => requestAnimationFrame(attach));
  notebook.modelChanged.connect(() => requestAnimationFrame(attach));
  attach();
}
