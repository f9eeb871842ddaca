/** The extension's settings, read in one place (parsing: logic/settings.ts). */
import * as vscode from "vscode";
import { settingsFrom, type Settings } from "./logic/settings";

export const SECTION = "causeway";

/** The settings for a resource (a workspace folder: its own values of resource-scoped settings). */
export function readSettings(scope?: vscode.ConfigurationScope): Settings {
  const c = vscode.workspace.getConfiguration(SECTION, scope);
  return settingsFrom((key) => c.get<unknown>(key));
}
