/**
 * Recording an unmodified program from the editor: "Record this program with Causeway" runs
 * `causeway record -- node FILE` on the active JavaScript/TypeScript file as a CLI job (asking
 * for its sensitive and untrusted tools once per program), and a launch.json configuration runs a
 * debug session under the preload. Either way the new run appears in the tree and opens in the
 * investigator when the program ends.
 */
import * as vscode from "vscode";
import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";
import { formatCommand } from "../core/log/argv";
import { failed, runCli } from "./cli-jobs";
import type { RunDiscovery } from "./discovery";
import type { InvestigatorPanel } from "./panel";
import type { ReplayService } from "./replay";
import type { RunsTree } from "./runs-tree";
import type { Services } from "./services";
import {
  JS_FILE,
  LAUNCH_NAME,
  PRELOAD_COMMAND,
  PY_FILE,
  TS_FILE,
  defaultTools,
  launchConfiguration,
  programCommand,
  recordArgs,
  rememberedTools,
  runIdFor,
  sessionOut,
  toolNamesIn,
  withUntrusted,
  type ProgramTools,
} from "./logic/record";

const STATE_KEY = "causeway.recordTools";

interface Deps {
  s: Services;
  discovery: RunDiscovery;
  panel: InvestigatorPanel;
  replay: ReplayService;
  tree: RunsTree;
}

/** The program a command was given (or the active editor's); `python`: a Python file is one too. */
function programFile(arg: unknown, python: boolean): vscode.Uri | undefined {
  const uri = arg instanceof vscode.Uri ? arg : vscode.window.activeTextEditor?.document.uri;
  if (!uri || uri.scheme !== "file" || !(JS_FILE.test(uri.fsPath) || TS_FILE.test(uri.fsPath) || (python && PY_FILE.test(uri.fsPath)))) {
    void vscode.window.showInformationMessage(
      python
        ? vscode.l10n.t("Causeway: open a JavaScript, TypeScript or Python program (.js, .mjs, .cjs, .ts, .py) to record it.")
        : vscode.l10n.t("Causeway: open a JavaScript or TypeScript program (.js, .mjs, .cjs, .ts) to record it."),
    );
    return undefined;
  }
  return uri;
}

function hasTsx(folder: string): boolean {
  try {
    createRequire(path.join(folder, "package.json")).resolve("tsx");
    return true;
  } catch {
    return false;
  }
}

async function saved(uri: vscode.Uri): Promise<void> {
  const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
  if (doc?.isDirty) await doc.save();
}

/** Tool names offered in the picks: those the source mentions, plus what was remembered. */
async function toolNames(uri: vscode.Uri, remembered?: ProgramTools): Promise<string[]> {
  let text = "";
  try {
    text = Buffer.from(await vscode.workspace.fs.readFile(uri)).toString("utf8");
  } catch {
    /* the picks start empty */
  }
  return [...new Set([...toolNamesIn(text), ...(remembered ? [...remembered.sensitive, ...remembered.untrusted, ...remembered.trusted] : [])])];
}

/** One multi-select pick of tool names (with "Other…" to type more); undefined: cancelled. */
async function pickTools(names: string[], picked: readonly string[], o: { title: string; placeHolder: string }): Promise<string[] | undefined> {
  const OTHER = "\0other";
  const items = [
    ...names.map((n) => ({ label: n, picked: picked.includes(n), value: n })),
    { label: vscode.l10n.t("$(edit) Other tools…"), description: vscode.l10n.t("type names, separated by commas"), picked: false, value: OTHER },
  ];
  const chosen = await vscode.window.showQuickPick(items, { title: o.title, placeHolder: o.placeHolder, canPickMany: true, ignoreFocusOut: true });
  if (!chosen) return undefined;
  const out = chosen.filter((c) => c.value !== OTHER).map((c) => c.value);
  if (chosen.some((c) => c.value === OTHER)) {
    const typed = await vscode.window.showInputBox({ title: o.title, prompt: vscode.l10n.t("Tool names, separated by commas"), ignoreFocusOut: true });
    if (typed === undefined) return undefined;
    out.push(
      ...typed
        .split(",")
        .map((t) => t.trim())
        .filter(Boolean),
    );
  }
  return [...new Set(out)];
}

/** Asks for the program's sensitive, then untrusted tools, with defaults; undefined: cancelled. */
async function askTools(names: string[], defaults: ProgramTools, label: string): Promise<ProgramTools | undefined> {
  const sensitive = await pickTools(names, defaults.sensitive, {
    title: vscode.l10n.t("Record {0} (1/2): sensitive tools", label),
    placeHolder: vscode.l10n.t("Which tools act on the world (send, pay, delete, export)? Alerts and Find the cause are about these."),
  });
  if (!sensitive) return undefined;
  const all = [...new Set([...names, ...sensitive])];
  const untrusted = await pickTools(all, defaults.untrusted, {
    title: vscode.l10n.t("Record {0} (2/2): untrusted tools", label),
    placeHolder: vscode.l10n.t("Which tools return outside content (documents, web pages, e-mails)? The other tools' results count as trusted."),
  });
  if (!untrusted) return undefined;
  return withUntrusted(all, sensitive, untrusted);
}

export interface Recording {
  recordProgram(arg: unknown): Promise<void>;
  addLaunchConfiguration(arg: unknown): Promise<void>;
}

/** The preload command and the debug-session watch; returns the two commands (registered in commands.ts). */
export function registerRecording(d: Deps): Recording {
  const r = recorder(d);
  watchDebugSessions(d.s, r.open);
  return { recordProgram: (arg) => recordProgram(r, arg), addLaunchConfiguration: (arg) => addLaunchConfiguration(r, arg) };
}

/** What both recording commands use: the services, the program's tools, and showing a new run. */
interface Recorder extends Deps {
  /** The program's tools: remembered, else asked (and remembered); `ask` asks again. */
  toolsFor: (uri: vscode.Uri, label: string, ask?: boolean) => Promise<ProgramTools | undefined>;
  /** Shows a new run: rescan, then the tree and the investigator on it. */
  open: (dir: string) => Promise<void>;
}

function recorder(d: Deps): Recorder {
  const { s, discovery, panel, tree } = d;
  const state = s.context.workspaceState;
  const remembered = (key: string) => rememberedTools(state.get(STATE_KEY), key);
  const remember = (key: string, tools: ProgramTools) =>
    state.update(STATE_KEY, { ...(state.get<Record<string, ProgramTools>>(STATE_KEY) ?? {}), [key]: tools });
  const toolsFor = async (uri: vscode.Uri, label: string, ask = false): Promise<ProgramTools | undefined> => {
    const known = remembered(uri.fsPath);
    if (known && !ask) return known;
    const names = await toolNames(uri, known);
    const tools = await askTools(names, defaultTools(names, known), label);
    if (tools) await remember(uri.fsPath, tools);
    return tools;
  };

  const open = async (dir: string) => {
    await discovery.rescan();
    if (!s.store.has(dir)) return;
    panel.show(dir);
    await tree.reveal(dir).then(undefined, (err) => s.log.warn(`revealing ${dir} in the tree: ${(err as Error)?.message ?? err}`));
  };

  return { ...d, toolsFor, open };
}

/** Records the program with `causeway record` as a CLI job, approves its replays, and opens the run. */
async function recordProgram(r: Recorder, arg: unknown): Promise<void> {
  const { s, replay } = r;
  if (!replay.canReplay) return replay.explainRestricted();
  const uri = programFile(arg, true);
  if (!uri) return;
  const folder = vscode.workspace.getWorkspaceFolder(uri);
  if (!folder || folder.uri.scheme !== "file") {
    void vscode.window.showInformationMessage(
      vscode.l10n.t("Causeway: open the folder that holds {0} to record it (its runs go into the folder's runs/).", path.basename(uri.fsPath)),
    );
    return;
  }
  const root = folder.uri.fsPath;
  const rel = path.relative(root, uri.fsPath);
  const cmd = programCommand(rel, { tsx: hasTsx(root) });
  if ("error" in cmd) {
    void vscode.window.showWarningMessage(vscode.l10n.t("Causeway: {0}", cmd.error));
    return;
  }
  await saved(uri);
  const tools = await r.toolsFor(uri, path.basename(uri.fsPath));
  if (!tools) return;
  const out = path.join(root, "runs");
  const runId = runIdFor(out, uri.fsPath, new Date());
  const dir = path.join(out, runId);
  const program = formatCommand(cmd.command);
  const code = await runCli(s, recordArgs({ out, runId, tools, command: cmd.command, via: cmd.via }), {
    title: vscode.l10n.t("recording {0}", rel),
    cwd: root,
  });
  if (!fs.existsSync(path.join(dir, "events.jsonl"))) return failed(s, `recording ${rel}`, code);
  // the user ran this program from the editor: its replays (the same command, the same file) are
  // approved too; a program recorded behind the gateway is never re-run by a replay
  if (cmd.via === "gateway") s.log.info(`recorded ${dir} behind the gateway (exit code ${code})`);
  else {
    try {
      await replay.approveRecorded(program, root);
      s.log.info(`recorded ${dir} (exit code ${code}); replays of "${program}" approved for ${uri.fsPath} as it is now`);
    } catch (err) {
      s.log.warn(`recorded ${dir}; replays of "${program}" not approved: ${(err as Error).message}`);
    }
  }
  await r.open(dir);
  const change = vscode.l10n.t("Change tools…");
  const msg =
    code === 0
      ? vscode.l10n.t("Causeway: recorded {0} into {1}. Right-click a tool call in the Runs view → Find the cause.", rel, path.relative(root, dir))
      : vscode.l10n.t("Causeway: recorded {0} into {1}, but it ended with exit code {2} (see the output).", rel, path.relative(root, dir), code ?? "?");
  const pick = await (code === 0 ? vscode.window.showInformationMessage(msg, change) : vscode.window.showWarningMessage(msg, change, "Show Output"));
  if (pick === change) await r.toolsFor(uri, path.basename(uri.fsPath), true);
  else if (pick) s.log.show(true);
}

/** Adds a launch.json configuration that runs the program under the preload. */
async function addLaunchConfiguration(r: Recorder, arg: unknown): Promise<void> {
  const { s } = r;
  const uri = programFile(arg, false);
  if (!uri) return;
  const folder = vscode.workspace.getWorkspaceFolder(uri);
  if (!folder) {
    void vscode.window.showInformationMessage(
      vscode.l10n.t("Causeway: open the folder that holds {0} first (launch.json belongs to a folder).", path.basename(uri.fsPath)),
    );
    return;
  }
  const tools = await r.toolsFor(uri, path.basename(uri.fsPath));
  if (!tools) return;
  const rel = path.relative(folder.uri.fsPath, uri.fsPath).split(path.sep).join("/");
  const name = `${LAUNCH_NAME}: ${path.basename(uri.fsPath)}`;
  const config = launchConfiguration({ program: `\${workspaceFolder}/${rel}`, tools, name, tsx: TS_FILE.test(uri.fsPath) });
  const launch = vscode.workspace.getConfiguration("launch", folder.uri);
  const current = (launch.get<unknown[]>("configurations") ?? []).filter((c) => !(c && typeof c === "object" && (c as { name?: unknown }).name === name));
  await launch.update("configurations", [...current, config], vscode.ConfigurationTarget.WorkspaceFolder);
  const file = vscode.Uri.joinPath(folder.uri, ".vscode", "launch.json");
  s.log.info(`launch configuration "${name}" written to ${file.fsPath}`);
  if (fs.existsSync(file.fsPath)) await vscode.window.showTextDocument(file, { preview: true });
  void vscode.window.showInformationMessage(
    vscode.l10n.t('Causeway: added "{0}" to launch.json. Start it from Run and Debug: the session records a run into runs/, which opens when it ends.', name),
  );
}

/**
 * The preload command (launch configurations name it) and the watch on debug sessions whose
 * configuration sets CAUSEWAY_OUT: the run a session recorded opens when it ends.
 */
function watchDebugSessions(s: Services, open: (dir: string) => Promise<void>): void {
  const watched = new Map<string, { out: string; before: Set<string> }>();
  const shown = new Set<string>();
  const runsIn = (out: string): string[] => {
    try {
      return fs
        .readdirSync(out, { withFileTypes: true })
        .filter((e) => e.isDirectory() && fs.existsSync(path.join(out, e.name, "events.jsonl")))
        .map((e) => path.join(out, e.name));
    } catch {
      return [];
    }
  };

  s.context.subscriptions.push(
    vscode.commands.registerCommand(PRELOAD_COMMAND, () => pathToFileURL(path.join(s.context.extensionPath, "dist", "register.js")).href),
    vscode.debug.onDidStartDebugSession((session) => {
      const out = sessionOut(session.configuration, session.workspaceFolder?.uri.fsPath);
      if (out && !session.parentSession) watched.set(session.id, { out, before: new Set(runsIn(out)) });
    }),
    vscode.debug.onDidTerminateDebugSession((session) => {
      const w = watched.get(session.id);
      if (!w) return;
      watched.delete(session.id);
      const fresh = runsIn(w.out).filter((r) => !w.before.has(r) && !shown.has(r));
      if (!fresh.length) {
        s.log.info(`debug session "${session.name}" ended without a new run in ${w.out}`);
        return;
      }
      const newest = fresh.map((r) => ({ r, t: fs.statSync(path.join(r, "events.jsonl")).mtimeMs })).sort((a, b) => b.t - a.t)[0].r;
      for (const r of fresh) shown.add(r);
      s.log.info(`debug session "${session.name}" recorded ${fresh.join(", ")}`);
      void open(newest)
        .then(() => vscode.window.showInformationMessage(vscode.l10n.t("Causeway: the debug session recorded {0}.", path.basename(newest))))
        .then(undefined, (err) => s.log.error(`opening ${newest}: ${(err as Error)?.stack ?? err}`));
    }),
  );
}
