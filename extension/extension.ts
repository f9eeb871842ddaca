/**
 * Causeway for VS Code: the runs of the workspace in a tree, their alerts as diagnostics, code
 * lenses on the agents' SDK calls, the investigator, and replays (Run test, Find the cause) in a
 * worker process. Activation only wires things up; runs are found and analysed afterwards, in
 * small batches, so that it stays cheap with a thousand runs.
 */
import * as vscode from "vscode";
import { readSettings, SECTION } from "./config";
import { CausewayLenses } from "./code-lens";
import { registerCommands } from "./commands";
import { DiagnosticsController } from "./diagnostics";
import { RunDiscovery } from "./discovery";
import { registerBlobs, openBlob } from "./blobs";
import { registerCollector } from "./collector";
import { TeamWorkers } from "./team-workers";
import { WorkspaceRuns } from "./logic/workspace-runs";
import { SiteResolver } from "./logic/sites";
import { SettingsByFolder } from "./logic/settings";
import { InvestigatorPanel } from "./panel";
import { ReplayService } from "./replay";
import { RunsTree } from "./runs-tree";
import type { Services } from "./services";
import { registerStatusBar } from "./status-bar";
import { exportCase } from "./cli-jobs";
import { setTranslator } from "./logic/l10n";
import { registerRecording } from "./record";
import { COMMANDS } from "./logic/command-ids";

/** The extension host's uptime when this bundle had been evaluated (ms), for the activation log. */
const EVALUATED_AT = Math.round(process.uptime() * 1000);

/** Longest wait of the background analysis for the Runs view's first listing (ms). */
const ANALYSIS_WAIT_MS = 1000;

export function activate(context: vscode.ExtensionContext): void {
  const t0 = performance.now();
  const t0Uptime = process.uptime() * 1000;
  setTranslator((message, ...args) => vscode.l10n.t(message, ...args));
  const log = vscode.window.createOutputChannel("Causeway", { log: true });
  context.subscriptions.push(log);
  const folders = () => (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === "file").map((f) => f.uri.fsPath);
  const settings = new SettingsByFolder((folder) => readSettings(folder === undefined ? undefined : vscode.Uri.file(folder)), folders);
  const store = new WorkspaceRuns({ log: (level, msg) => log[level](msg) });
  context.subscriptions.push(store);
  const s: Services = {
    context,
    store,
    log,
    sites: new SiteResolver({ folders: folders(), extensionPath: context.extensionPath }),
    settings: (resource) => settings.get(resource),
  };

  registerBlobs(s);
  const tree = new RunsTree(s);
  const diagnostics = new DiagnosticsController(s);
  const lenses = new CausewayLenses(s);
  const replay = new ReplayService(s);
  const discovery = new RunDiscovery(s);
  tree.waitForRuns(discovery.listed);
  const panel = new InvestigatorPanel(s, replay, {
    revealInTree: (run, seq) => tree.reveal(run, seq),
    openBlob: (run, ref) => openBlob(s, run, ref),
    exportReport: async () => void (await vscode.commands.executeCommand(COMMANDS.exportReport)),
    exportCase: (run, target) => exportCase(s, run, target),
  });
  context.subscriptions.push(tree, diagnostics, lenses, discovery, panel);
  registerStatusBar(s);
  registerCommands({ s, tree, panel, replay, discovery, recording: registerRecording({ s, discovery, panel, replay, tree }) });
  const collector = registerCollector(s);
  tree.setRemote(collector, collector.onDidChange);
  replay.setElsewhere(new TeamWorkers(s, collector));

  context.subscriptions.push(
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (!e.affectsConfiguration(SECTION)) return;
      const globs = settings.fingerprint("runsGlob");
      const lens = settings.fingerprint("codeLens");
      settings.clear();
      if (globs !== settings.fingerprint("runsGlob")) discovery.restart();
      if (lens !== settings.fingerprint("codeLens")) lenses.invalidate();
    }),
    vscode.workspace.onDidChangeWorkspaceFolders(() => {
      settings.clear();
      s.sites.reset({ folders: folders(), extensionPath: context.extensionPath });
      discovery.restart();
      diagnostics.refreshAll();
      lenses.invalidate();
    }),
  );

  // off the activation path: find the runs, list them, then analyse them in slices. The analysis
  // waits for the Runs view's first listing (at most a second after the runs are found, when the
  // view is closed): analysing first kept the extension host too busy to answer the view.
  const release = store.hold();
  // the runs the last session found, listed now: the Runs view's first request answers with them,
  // and the walk that corrects them (and the file watchers) waits for that listing too
  const remembered = discovery.listLastSession();
  const firstListing = () => Promise.race([tree.listed, new Promise((r) => setTimeout(r, ANALYSIS_WAIT_MS))]);
  const findRuns = () => {
    const t1 = performance.now();
    void collector.restore().catch((err) => log.warn(`collector: ${(err as Error).message}`));
    void discovery.start().then(() => {
      const t2 = performance.now();
      void firstListing().then(release);
      log.info(`runs found in ${(t2 - t1).toFixed(0)} ms; analysing ${store.pending} in the background`);
      void store
        .idle()
        .then(() =>
          log.info(
            `analysed ${store.size} runs in ${(performance.now() - t2).toFixed(0)} ms (${store.stats.analysisMs.toFixed(0)} ms of analysis in ${store.stats.slices} slices, longest ${store.stats.longestSliceMs.toFixed(0)} ms)`,
          ),
        );
    });
  };
  setTimeout(() => (remembered ? void firstListing().then(findRuns) : findRuns()), 0);
  // the host's uptime: the log's times are stamped when a line is written, late when the host is busy
  log.info(
    `activated in ${(performance.now() - t0).toFixed(1)} ms (workspace ${vscode.workspace.isTrusted ? "trusted" : "in Restricted Mode: replays are off"}; extension host up ${Math.round(process.uptime() * 1000)} ms, bundle evaluated at ${EVALUATED_AT} ms, activate() called at ${Math.round(t0Uptime)} ms)`,
  );
}

export function deactivate(): void {
  // everything is in context.subscriptions
}
