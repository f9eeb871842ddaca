/** The extension's settings, read in one place (parsing: logic/settings.ts). */
import * as vscode from "vscode";
import { settingsFrom, type Settings } from "./logic/settings";

export type { Settings } from "./logic/settings";
export const SECTION = "causeway";

/** The settings for a resource (a workspace folder: its own values of resource-scoped settings). */
export function readSettings(scope?: vscode.ConfigurationScope): Settings {
  const c = vscode.workspace.getConfiguration(SECTION, scope);
  return settingsFrom((key) => c.get<unknown>(key));
}

/**
 * Adds a program to the allowed list: in the folder's own settings when that folder already sets
 * the list (a workspace-level value would be hidden by it), else in the workspace's.
 */
export async function allowProgram(program: string, folder?: vscode.Uri): Promise<void> {
  const c = vscode.workspace.getConfiguration(SECTION, folder);
  const seen = c.inspect<string[]>("allowedPrograms");
  const inFolder = folder !== undefined && seen?.workspaceFolderValue !== undefined;
  const cur = (inFolder ? seen?.workspaceFolderValue : seen?.workspaceValue) ?? [];
  if (!cur.includes(program)) await c.update("allowedPrograms", [...cur, program], inFolder ? vscode.ConfigurationTarget.WorkspaceFolder : vscode.ConfigurationTarget.Workspace);
}
