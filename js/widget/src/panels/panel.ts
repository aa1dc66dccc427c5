/** A panel: one tab of the widget (its own module), registered in panels/index.ts. */
import type { Ctx } from "../context";
import type { View } from "../protocol";

export interface Panel {
  /** the view it is shown for (the `view` trait) */
  name: View;
  /** its tab's label */
  tab: string;
  el: HTMLElement;
  /** redraw from the traits (called once per batch of changes; a panel skips what did not change) */
  draw(): void;
  /** whether its tab is hidden now (default: never) */
  tabHidden?(): boolean;
  /** called when it is shown */
  shown?(): void;
  dispose?(): void;
}

export type PanelFactory = (ctx: Ctx) => Panel;
