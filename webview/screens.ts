/**
 * The screens, in the order people ask their questions, with their tab labels and icons.
 */
import type { Screen } from "../core/protocol/messages";

export interface ScreenInfo {
  id: Screen;
  label: string;
  /** A codicon name. */
  icon: string;
  /** Needs a selected run. */
  perRun: boolean;
}

export const SCREEN_INFO: readonly ScreenInfo[] = [
  { id: "runs", label: "Runs", icon: "list-unordered", perRun: false },
  { id: "overview", label: "Overview", icon: "dashboard", perRun: true },
  { id: "why", label: "Why?", icon: "question", perRun: true },
  { id: "timeline", label: "Timeline", icon: "history", perRun: true },
  { id: "graph", label: "Graph", icon: "type-hierarchy-sub", perRun: true },
  { id: "agents", label: "Agents", icon: "organization", perRun: true },
  { id: "influence", label: "Influence", icon: "references", perRun: false },
];

export const SCREENS: readonly Screen[] = SCREEN_INFO.map((s) => s.id);
