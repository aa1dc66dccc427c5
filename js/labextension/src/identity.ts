/**
 * The notebook's session identity: `metadata.durable_nb` in the notebook file.
 *
 * `{"session": <id>, "path": <where the file was when last seen>}`, plus
 * `"fork_of": <original id>` in a copy. Created at the first cell run of a
 * notebook that has none, and added to every execute request's metadata
 * under `"durable_nb"`, so the kernel (durable_nb/notebook/identity.py)
 * knows the notebook's session before a cell runs:
 *
 * - rename (here or elsewhere) and kernel restart keep the id;
 * - a new notebook gets a new id, never another notebook's session;
 * - a copy (Duplicate, Copy/Paste, `cp`) is noticed when it opens: its
 *   recorded path names another file that still exists and keeps the same
 *   id; the copy gets a new id with `fork_of`, and the kernel forks the
 *   original's active path into it on first use (the original's file and
 *   session are not touched);
 * - a notebook from before the extension that ran `%%durable` cells keeps
 *   the session named after its file (said once, in a notification).
 */
import { Notification } from '@jupyterlab/apputils';
import { Contents, Kernel } from '@jupyterlab/services';
import type { ICodeCellModel } from '@jupyterlab/cells';
import { NotebookPanel } from '@jupyterlab/notebook';
import type { JSONObject } from '@lumino/coreutils';
import { nameBasedId } from './names';

export { nameBasedId };

export const KEY = 'durable_nb';

export interface IIdentity {
  session: string;
  path?: string;
  fork_of?: string;
}

/** The identity the notebook keeps, or `null` when it has none (or an odd value). */
export function identityOf(panel: NotebookPanel): IIdentity | null {
  const md = panel.content.model?.getMetadata(KEY) as Partial<IIdentity> | undefined;
  return md && typeof md === 'object' && typeof md.session === 'string' && md.session ? (md as IIdentity) : null;
}

function setIdentity(panel: NotebookPanel, id: IIdentity): IIdentity {
  panel.content.model?.setMetadata(KEY, { ...id });
  return id;
}

/** A fresh session id, e.g. `nb-20261130-231502-9f3a6c01` (what a session id may hold: letters, digits, `-`). */
export function newSessionId(now: Date = new Date()): string {
  const p = (n: number) => String(n).padStart(2, '0');
  const day = `${now.getUTCFullYear()}${p(now.getUTCMonth() + 1)}${p(now.getUTCDate())}`;
  const time = `${p(now.getUTCHours())}${p(now.getUTCMinutes())}${p(now.getUTCSeconds())}`;
  const bytes = new Uint8Array(4);
  crypto.getRandomValues(bytes);
  const hex = Array.from(bytes, b => b.toString(16).padStart(2, '0')).join('');
  return `nb-${day}-${time}-${hex}`;
}

/** Whether the notebook ran `%%durable` cells before (an executed code cell starting with it). */
function ranDurableCells(panel: NotebookPanel): boolean {
  const cells = panel.content.model?.cells;
  if (!cells) {
    return false;
  }
  for (let i = 0; i < cells.length; i++) {
    const c = cells.get(i);
    if (c.type === 'code' && c.sharedModel.getSource().trimStart().startsWith('%%durable')) {
      const count = (c as ICodeCellModel).executionCount;
      if (count !== null && count !== undefined) {
        return true;
      }
    }
  }
  return false;
}

/**
 * Settle the identity of a notebook that was just opened (see the module docs).
 * Writes metadata only when the file moved, was copied, or predates the extension.
 */
export async function reconcile(panel: NotebookPanel, contents: Contents.IManager): Promise<void> {
  const path = panel.context.path;
  const id = identityOf(panel);
  if (id === null) {
    if (ranDurableCells(panel)) {
      const session = nameBasedId(path);
      setIdentity(panel, { session, path });
      Notification.info(
        `durable_nb: this notebook's session "${session}" was found by its name; ` +
          'the notebook now keeps its id, so renaming it keeps the session.',
        { autoClose: 8000 }
      );
    }
    return; // a notebook that never ran a turn gets a new id at its first cell run
  }
  if (!id.path || id.path === path) {
    return;
  }
  let original: Contents.IModel | null = null;
  try {
    original = await contents.get(id.path, { content: true, type: 'notebook' });
  } catch {
    original = null; // moved or renamed while closed: the old path is gone
  }
  const content = original?.content as { metadata?: Record<string, Partial<IIdentity> | undefined> } | null | undefined;
  const theirs = content?.metadata?.[KEY];
  if (theirs && theirs.session === id.session && identityOf(panel)?.session === id.session) {
    const session = newSessionId();
    setIdentity(panel, { session, path, fork_of: id.session });
    Notification.info(
      `durable_nb: this notebook is a copy of ${id.path}; it gets its own session ${session}, ` +
        `forked from "${id.session}" when a cell first runs (the original is left as it was).`,
      { autoClose: 8000 }
    );
  } else {
    setIdentity(panel, { ...id, path });
  }
}

/** Follow a rename of an open notebook: same session, new path. */
export function followRename(panel: NotebookPanel): void {
  const id = identityOf(panel);
  if (id !== null && id.path !== panel.context.path) {
    setIdentity(panel, { ...id, path: panel.context.path });
  }
}

/** The identity to send with an execute request: created at the first cell run (`cellId` in its metadata). */
function forRequest(panel: NotebookPanel, fromCell: boolean): IIdentity | null {
  const id = identityOf(panel);
  if (id !== null || !fromCell) {
    return id;
  }
  return setIdentity(panel, { session: newSessionId(), path: panel.context.path });
}

const patched = new WeakSet<Kernel.IKernelConnection>();

/**
 * Make `kernel` add the notebook's identity to every execute request's metadata
 * (key `"durable_nb"`), next to the cell metadata JupyterLab sends. JupyterLab has
 * no hook for execute-request metadata, so the connection's `requestExecute` is
 * wrapped, once per connection (a restart keeps the connection).
 */
export function sendIdentity(kernel: Kernel.IKernelConnection | null | undefined, panel: NotebookPanel): void {
  if (!kernel || patched.has(kernel)) {
    return;
  }
  patched.add(kernel);
  const original = kernel.requestExecute.bind(kernel);
  kernel.requestExecute = (content, disposeOnDone, metadata) => {
    const id = forRequest(panel, !!metadata && typeof metadata.cellId === 'string');
    const md = id === null ? metadata : { ...(metadata ?? {}), [KEY]: { ...id } };
    return original(content, disposeOnDone, md as JSONObject | undefined);
  };
}
