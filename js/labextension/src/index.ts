/**
 * durable_nb's JupyterLab 4 / Notebook 7 extension: the notebook keeps its
 * session id (./identity.ts) and tagged cells show badges and toggle
 * (./tags.ts), `%%durable` cells are highlighted as Markdown (./highlight.ts), and a session
 * widget's output shows its saved view until the widget is live and keeps that view fresh for
 * the saved file (./output.ts), which the page tells the kernel (./page.ts). The widget itself is
 * an anywidget.
 */
import { JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { ICommandPalette } from '@jupyterlab/apputils';
import { IEditorLanguageRegistry } from '@jupyterlab/codemirror';
import type { ReadonlyPartialJSONObject } from '@lumino/coreutils';
import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';

import { watchProse } from './highlight';
import { followRename, reconcile, sendIdentity } from './identity';
import { addOutputRenderer } from './output';
import { answerKernel } from './page';
import { TAGS, TOGGLE, toggleCommand, toggleTag, watchBadges } from './tags';

const plugin: JupyterFrontEndPlugin<void> = {
  id: 'durable_nb:plugin',
  description:
    "durable_nb: the notebook's session id in its metadata; badges and toggles for tagged cells; session widget outputs.",
  autoStart: true,
  requires: [INotebookTracker],
  optional: [ICommandPalette, IEditorLanguageRegistry],
  activate: (
    app: JupyterFrontEnd,
    tracker: INotebookTracker,
    palette: ICommandPalette | null,
    languages: IEditorLanguageRegistry | null
  ) => {
    const contents = app.serviceManager.contents;

    tracker.widgetAdded.connect((_, panel: NotebookPanel) => {
      addOutputRenderer(panel);
      const ctx = panel.sessionContext;
      sendIdentity(ctx.session?.kernel, panel);
      answerKernel(ctx.session?.kernel);
      ctx.kernelChanged.connect((__, change) => {
        sendIdentity(change.newValue, panel);
        answerKernel(change.newValue);
      });
      void panel.context.ready.then(() => {
        watchBadges(panel.content);
        watchProse(panel.content, languages);
        return reconcile(panel, contents);
      });
      panel.context.pathChanged.connect(() => followRename(panel));
    });

    const tagOf = (args: ReadonlyPartialJSONObject) => String(args.tag ?? '');
    const isTagged = (tag: string) => {
      const t = tracker.activeCell?.model.getMetadata('tags');
      return Array.isArray(t) && t.includes(tag);
    };
    const notify = () => {
      app.commands.notifyCommandChanged(TOGGLE);
      for (const tag of TAGS) app.commands.notifyCommandChanged(toggleCommand(tag));
    };
    const toggle = (tag: string) => {
      const panel = tracker.currentWidget;
      if (panel !== null) {
        toggleTag(panel.content, tag);
        notify();
      }
    };
    // One command for any tag (args.tag), kept for callers that name it ...
    app.commands.addCommand(TOGGLE, {
      label: args => (args.toolbar ? tagOf(args) : `Toggle the ${tagOf(args)} tag of the selected cells`),
      caption: args => `durable_nb: toggle the ${tagOf(args)} tag of this cell`,
      className: 'durable-nb-toggle',
      isEnabled: args => tracker.currentWidget !== null && (TAGS as readonly string[]).includes(tagOf(args)),
      isVisible: args => !args.toolbar || tracker.activeCell?.model.type === 'code',
      isToggled: args => isTagged(tagOf(args)),
      execute: args => toggle(tagOf(args))
    });
    // ... and one per tag, which the toolbar buttons, the palette and the shortcuts use: a toolbar
    // button's tooltip names the first key binding of its command, so each tag needs its own command
    // for its button to name its own shortcut (T M, T E, T N, T S).
    for (const tag of TAGS) {
      app.commands.addCommand(toggleCommand(tag), {
        label: args => (args.toolbar ? tag : `Toggle the ${tag} tag of the selected cells`),
        caption: `durable_nb: toggle the ${tag} tag of this cell`,
        className: 'durable-nb-toggle',
        isEnabled: () => tracker.currentWidget !== null,
        isVisible: args => !args.toolbar || tracker.activeCell?.model.type === 'code',
        isToggled: () => isTagged(tag),
        execute: () => toggle(tag)
      });
    }
    tracker.activeCellChanged.connect(notify);
    if (palette) {
      for (const tag of TAGS) {
        palette.addItem({ command: toggleCommand(tag), category: 'durable_nb' });
      }
    }
  }
};

export default plugin;
