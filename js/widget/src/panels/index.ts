/** The panels, in tab order. A new panel is one module plus one line here. */
import { comparePanel } from "./compare";
import { gridPanel } from "./grid";
import { listPanel } from "./list";
import type { PanelFactory } from "./panel";
import { treePanel } from "./tree";
import { modelPanel, transcriptPanel } from "./views";

export const PANELS: PanelFactory[] = [treePanel, listPanel, modelPanel, transcriptPanel, comparePanel, gridPanel];
