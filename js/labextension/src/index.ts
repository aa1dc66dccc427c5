/**
 * durable_nb's JupyterLab 4 / Notebook 7 extension: the notebook keeps its
 * session id (./identity.ts) and tagged cells show badges and toggle
 * (./tags.ts). The session widget itself is an anywidget and needs nothing here.
 */
import { JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { ICommandPalette } from '@jupyterlab/apputils';
import type { ReadonlyPartialJSONObject } from '@lumino/coreutils';
import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';

import { followRename, reconcile, sendIdentity } from './identity';
import { TAGS, TOGGLE, toggleTag, watchBadges } from './tags';

const plugin: JupyterFrontEndPlugin<void> = {
  id: 'durable_nb:plugin',
  description: "durable_nb: the notebook's session id in its metadata; badges and toggles for tagged cells.",
  autoStart: true,
  requires: [INotebookTracker],
  optional: [ICommandPalette],
  activate: (app: JupyterFrontEnd, tracker: INotebookTracker, palette: ICommandPalette | null) => {
    const contents = app.serviceManager.contents;

    tracker.widgetAdded.connect((_, panel: NotebookPanel) => {
      const ctx = panel.sessionContext;
      sendIdentity(ctx.session?.kernel, panel);
      ctx.kernelChanged.connect((__, change) => sendIdentity(change.newValue, panel));
      void panel.context.ready.then(() => {
        watchBadges(panel.content);
        return reconcile(panel, contents);
      });
      panel.context.pathChanged.connect(() => followRename(panel));
    });

    const tagOf = (args: ReadonlyPartialJSONObject) => String(args.tag ?? '');
    app.commands.addCommand(TOGGLE, {
      label: args => (args.toolbar ? tagOf(args) : `Toggle the ${tagOf(args)} tag of the selected cells`),
      caption: args => `durable_nb: toggle the ${tagOf(args)} tag of this cell`,
      className: 'durable-nb-toggle',
      isEnabled: args => tracker.currentWidget !== null && (TAGS as readonly string[]).includes(tagOf(args)),
      isVisible: args => !args.toolbar || tracker.activeCell?.model.type === 'code',
      isToggled: args => {
        const t = tracker.activeCell?.model.getMetadata('tags');
        return Array.isArray(t) && t.includes(tagOf(args));
      },
      execute: args => {
        const panel = tracker.currentWidget;
        if (panel !== null) {
          toggleTag(panel.content, tagOf(args));
          app.commands.notifyCommandChanged(TOGGLE);
        }
      }
    });
    tracker.activeCellChanged.connect(() => app.commands.notifyCommandChanged(TOGGLE));
    if (palette) {
      for (const tag of TAGS) {
        palette.addItem({ command: TOGGLE, args: { tag }, category: 'durable_nb' });
      }
    }
  }
};

export default plugin;
