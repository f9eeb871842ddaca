/** What the parts of the extension share. Built once in activate(). */
import type * as vscode from "vscode";
import type { WorkspaceRuns } from "./logic/workspace-runs";
import type { SiteResolver } from "./logic/sites";
import type { Settings } from "./logic/settings";

export interface Services {
  readonly context: vscode.ExtensionContext;
  readonly store: WorkspaceRuns;
  readonly log: vscode.LogOutputChannel;
  readonly sites: SiteResolver;
  /** The settings for a path's workspace folder (resource-scoped ones may differ per folder); none: the workspace's. */
  settings(resource?: string): Settings;
}

/** A run and one of its events, as commands receive them from the tree, lenses, quick fixes and the webview. */
export interface EventRef {
  run: string;
  seq?: number;
}
