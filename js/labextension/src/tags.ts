/**
 * Tagged cells you can see and toggle: a badge on each cell tagged `meta`,
 * `ephemeral`, `note` or `system`, and a command per tag that toggles it on the
 * selected cells (cell toolbar buttons, palette entries, `T M` / `T E` /
 * `T N` / `T S` in command mode). The tags are exclusive: a `%%durable` cell
 * is one kind, so turning one on turns the others off.
 */
import { Cell } from '@jupyterlab/cells';
import { Notebook } from '@jupyterlab/notebook';

/** The kinds of a `%%durable` cell, as durable_nb.notebook.options.KINDS declares them (tests/notebook/test_cell_kinds.py). */
export const TAGS = ['meta', 'ephemeral', 'note', 'system'] as const;
export const TOGGLE = 'durable_nb:toggle-tag';

/** The command that toggles one tag (`durable_nb:toggle-meta`): its own command, so that its toolbar
 * button's tooltip names its own shortcut (the schema binds T M, T E, T N, T S to these). */
export const toggleCommand = (tag: string): string => `durable_nb:toggle-${tag}`;

const WHAT: Record<string, string> = {
  meta: 'sent to the model, kept, hidden from the transcript',
  ephemeral: 'sent to the model for one turn, never kept',
  note: 'kept and shown, never sent to the model',
  system: "the session's system prompt"
};

function tagsOf(cell: Cell): string[] {
  const t = cell.model.getMetadata('tags');
  return Array.isArray(t) ? t.filter(x => typeof x === 'string') : [];
}

/** Draw the badges of `cell` from its tags (idempotent); mark the cell with its id
 * (`data-durable-cell-id`: what a `cell:<id>` origin names; tests find cells by it). */
export function renderBadges(cell: Cell): void {
  cell.node.dataset.durableCellId = cell.model.id;
  const ours = tagsOf(cell).filter(t => (TAGS as readonly string[]).includes(t));
  let box = cell.node.querySelector(':scope > .durable-nb-badges') as HTMLElement | null;
  cell.node.classList.toggle('durable-nb-tagged', ours.length > 0);
  if (ours.length === 0) {
    box?.remove();
    return;
  }
  if (box === null) {
    box = document.createElement('div');
    box.className = 'durable-nb-badges';
    cell.node.appendChild(box);
  }
  box.replaceChildren(
    ...ours.map(t => {
      const b = document.createElement('span');
      b.className = 'durable-nb-badge';
      b.dataset.tag = t;
      b.textContent = t;
      b.title = `durable_nb ${t} cell: ${WHAT[t]}`;
      return b;
    })
  );
}

const watched = new WeakSet<Cell>();

/** Keep the badges of every cell of `notebook` in step with their tags. */
export function watchBadges(notebook: Notebook): void {
  const attach = () => {
    for (const cell of notebook.widgets) {
      if (!watched.has(cell)) {
        watched.add(cell);
        cell.model.metadataChanged.connect(() => renderBadges(cell));
      }
      renderBadges(cell);
    }
  };
  notebook.model?.cells.changed.connect(() => requestAnimationFrame(attach));
  notebook.modelChanged.connect(() => requestAnimationFrame(attach));
  attach();
}

/** Toggle `tag` on the selected (or active) cells; turning it on removes the other kinds. */
export function toggleTag(notebook: Notebook, tag: string): void {
  const cells = notebook.widgets.filter(c => notebook.isSelectedOrActive(c));
  const on = !cells.every(c => tagsOf(c).includes(tag));
  for (const cell of cells) {
    const rest = tagsOf(cell).filter(t => !(TAGS as readonly string[]).includes(t));
    const next = on ? [...rest, tag] : rest;
    if (next.length) {
      cell.model.setMetadata('tags', next);
    } else {
      cell.model.deleteMetadata('tags');
    }
  }
}

