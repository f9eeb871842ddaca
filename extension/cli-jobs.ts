/**
 * Jobs that run the `causeway` CLI (dist/cli.js) as a child process, off the extension host:
 * Record the demo (record 8 runs of the built-in demo and test them), Export report (the
 * investigator as one static HTML file) and Record this program (record.ts). Output goes to the
 * output channel; each can be cancelled, which stops the CLI's whole process group.
 */
import * as vscode from "vscode";
import path from "node:path";
import { spawn } from "node:child_process";
import type { RunDiscovery } from "./discovery";
import type { InvestigatorPanel } from "./panel";
import type { ReplayService } from "./replay";
import type { Services } from "./services";

/** Runs dist/cli.js with `args` under a cancellable progress notification; resolves with its exit code (null: did not start or cancelled). */
export function runCli(s: Services, args: string[], o: { title: string; cwd: string; progressFrom?: RegExp }): Thenable<number | null> {
  const cli = path.join(s.context.extensionPath, "dist", "cli.js");
  s.log.info(`${o.title}: causeway ${args.join(" ")}`);
  return vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: `Causeway: ${o.title}`, cancellable: true },
    (progress, token) =>
      new Promise<number | null>((resolve) => {
        // its own process group: a cancel (and the end) also stops what it started (a recorded program, its MCP servers)
        const child = spawn(process.execPath, [cli, ...args], {
          cwd: o.cwd,
          env: { ...process.env, ELECTRON_RUN_AS_NODE: "1" },
          stdio: ["ignore", "pipe", "pipe"],
          detached: process.platform !== "win32",
        });
        let cancelled = false;
        const killGroup = (signal: NodeJS.Signals) => {
          try {
            if (child.pid && process.platform !== "win32") process.kill(-child.pid, signal);
            else child.kill(signal);
          } catch {
            /* gone */
          }
        };
        const sub = token.onCancellationRequested(() => {
          cancelled = true;
          killGroup("SIGTERM");
          setTimeout(() => killGroup("SIGKILL"), 3000).unref();
        });
        child.on("exit", () => killGroup("SIGKILL")); // whatever it left behind
        const lines = (chunk: Buffer, err: boolean) => {
          for (const l of chunk.toString("utf8").split("\n")) {
            if (!l.trim()) continue;
            if (err) s.log.warn(l);
            else s.log.info(l);
            if (o.progressFrom?.test(l)) progress.report({ message: l.replace(o.progressFrom, "").trim().slice(0, 90) });
          }
        };
        child.stdout.on("data", (c: Buffer) => lines(c, false));
        child.stderr.on("data", (c: Buffer) => lines(c, true));
        child.on("error", (err) => {
          s.log.error(`could not start ${cli}: ${err.message}`);
          sub.dispose();
          resolve(null);
        });
        child.on("close", (code) => {
          sub.dispose();
          resolve(cancelled ? null : code);
        });
      }),
  );
}

export async function pickFolder(title: string): Promise<vscode.WorkspaceFolder | undefined> {
  const folders = (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === "file");
  if (!folders.length) {
    void vscode.window.showInformationMessage(vscode.l10n.t("Causeway: open a folder first."));
    return undefined;
  }
  return folders.length === 1 ? folders[0] : vscode.window.showWorkspaceFolderPick({ placeHolder: title });
}

export async function failed(s: Services, what: string, code: number | null): Promise<void> {
  const pick = await vscode.window.showErrorMessage(
    code === null ? vscode.l10n.t("Causeway: {0} did not finish.", what) : vscode.l10n.t("Causeway: {0} failed (exit code {1}).", what, code),
    "Show Output",
  );
  if (pick) s.log.show(true);
}

/** Records the built-in demo into <folder>/runs. Runs code (the demo and its replays): trusted workspaces only. */
export async function recordDemo(s: Services, replay: ReplayService, discovery: RunDiscovery, panel: InvestigatorPanel): Promise<void> {
  if (!replay.canReplay) return replay.explainRestricted();
  const folder = await pickFolder(vscode.l10n.t("Record the demo into which folder?"));
  if (!folder) return;
  const out = path.join(folder.uri.fsPath, "runs");
  const code = await runCli(s, ["demo", "--out", out], {
    title: vscode.l10n.t("recording the demo (8 runs, then tests by paired replay)"),
    cwd: folder.uri.fsPath,
    progressFrom: /^==\s*/,
  });
  await discovery.rescan();
  if (code !== 0) return failed(s, "recording the demo", code);
  const pick = await vscode.window.showInformationMessage(
    vscode.l10n.t("Causeway: recorded the demo in {0}: 8 runs, with tests.", path.relative(folder.uri.fsPath, out) || out),
    "Open investigator",
  );
  if (pick) {
    const first = path.join(out, "demo-seed0");
    panel.show(s.store.has(first) ? first : undefined);
  }
}

/** Writes the static HTML report of one run, or of every run in a workspace folder. */
export async function exportReport(s: Services, run: string | undefined): Promise<void> {
  const folders = (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === "file");
  let root: string | undefined;
  if (run || folders.length > 1) {
    const scope = await vscode.window.showQuickPick(
      [
        ...(run ? [{ label: vscode.l10n.t("This run: {0}", path.basename(run)), value: run }] : []),
        ...folders.map((f) => ({ label: vscode.l10n.t("Every run in {0}", f.name), value: f.uri.fsPath })),
      ],
      { title: vscode.l10n.t("Export report"), placeHolder: vscode.l10n.t("What goes into the report?") },
    );
    root = scope?.value;
  } else root = folders[0]?.uri.fsPath;
  if (!root) {
    if (!folders.length) void vscode.window.showInformationMessage(vscode.l10n.t("Causeway: open a folder first."));
    return;
  }
  const base = vscode.workspace.getWorkspaceFolder(vscode.Uri.file(root))?.uri ?? vscode.Uri.file(path.dirname(root));
  const target = await vscode.window.showSaveDialog({
    defaultUri: vscode.Uri.joinPath(base, "causeway-report.html"),
    filters: { HTML: ["html"] },
    title: vscode.l10n.t("Export report"),
  });
  if (!target) return;
  const code = await runCli(s, ["report", root, "-o", target.fsPath], { title: vscode.l10n.t("writing the report"), cwd: path.dirname(target.fsPath) });
  if (code !== 0) return failed(s, "writing the report", code);
  const openInBrowser = vscode.l10n.t("Open in Browser");
  const reveal = vscode.l10n.t("Reveal");
  const pick = await vscode.window.showInformationMessage(
    vscode.l10n.t("Causeway: report written to {0} (a static page: opens from disk, no network).", path.basename(target.fsPath)),
    openInBrowser,
    reveal,
  );
  if (pick === openInBrowser) await vscode.env.openExternal(target);
  else if (pick === reveal) await vscode.commands.executeCommand("revealFileInOS", target);
}

/** Imports an OTLP/JSON file of OpenTelemetry GenAI traces as runs under <folder>/runs. Runs no code. */
export async function importOtelTraces(s: Services, discovery: RunDiscovery, panel: InvestigatorPanel): Promise<void> {
  const folder = await pickFolder(vscode.l10n.t("Import the traces as runs into which folder?"));
  if (!folder) return;
  const picked = await vscode.window.showOpenDialog({
    title: vscode.l10n.t("Import OpenTelemetry traces (OTLP/JSON with GenAI spans)"),
    canSelectMany: false,
    defaultUri: folder.uri,
    filters: { [vscode.l10n.t("OTLP JSON")]: ["json", "jsonl"], [vscode.l10n.t("All files")]: ["*"] },
    openLabel: "Import",
  });
  const file = picked?.[0];
  if (!file) return;
  const out = path.join(folder.uri.fsPath, "runs");
  let runs: string[];
  try {
    runs = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: vscode.l10n.t("Causeway: importing {0}", path.basename(file.fsPath)) },
      async () => {
        await new Promise((r) => setTimeout(r, 0)); // let the notification show first
        const { importOtel } = await import("../core/importers/otel");
        return importOtel(file.fsPath, out).runs;
      },
    );
  } catch (err) {
    s.log.error(`importing ${file.fsPath} failed: ${(err as Error)?.stack ?? err}`);
    const pick = await vscode.window.showErrorMessage(
      vscode.l10n.t("Causeway: could not import {0}: {1}", path.basename(file.fsPath), (err as Error)?.message ?? String(err)),
      "Show Output",
    );
    if (pick) s.log.show(true);
    return;
  }
  s.log.info(`imported ${runs.length} run(s) from ${file.fsPath}: ${runs.join(", ")}`);
  await discovery.rescan();
  const pick = await vscode.window.showInformationMessage(
    runs.length === 1
      ? vscode.l10n.t("Causeway: imported 1 run from {0} into {1}.", path.basename(file.fsPath), path.relative(folder.uri.fsPath, out) || out)
      : vscode.l10n.t("Causeway: imported {0} runs from {1} into {2}.", runs.length, path.basename(file.fsPath), path.relative(folder.uri.fsPath, out) || out),
    "Open investigator",
  );
  if (pick && runs[0]) panel.show(s.store.has(runs[0]) ? runs[0] : undefined);
}

/** Writes the case file of one action (markdown, every figure linked to the log) where the user says. Runs no code. */
export async function exportCase(s: Services, run: string, target: string): Promise<void> {
  const base = vscode.workspace.getWorkspaceFolder(vscode.Uri.file(run))?.uri ?? vscode.Uri.file(path.dirname(run));
  const file = await vscode.window.showSaveDialog({
    defaultUri: vscode.Uri.joinPath(base, `case-${path.basename(run)}.md`),
    filters: { Markdown: ["md"] },
    title: vscode.l10n.t("Export case"),
  });
  if (!file) return;
  try {
    const { readRun } = await import("../core/log/reader");
    const { buildCase, caseMarkdown } = await import("../core/report/case");
    const c = buildCase(readRun(run, { checkBlobs: true }), { target, from: path.dirname(file.fsPath) });
    await vscode.workspace.fs.writeFile(file, Buffer.from(caseMarkdown(c), "utf8"));
    s.log.info(`case file of ${target} in ${run} written to ${file.fsPath} (${c.evidence.length} links)`);
    const pick = await vscode.window.showInformationMessage(
      vscode.l10n.t("Causeway: case written to {0} — {1}.", path.basename(file.fsPath), c.headline),
      vscode.l10n.t("Open"),
    );
    if (pick === "Open") await vscode.commands.executeCommand("markdown.showPreview", file);
  } catch (err) {
    s.log.error(`writing the case file failed: ${(err as Error)?.stack ?? err}`);
    void vscode.window.showErrorMessage(vscode.l10n.t("Causeway: could not write the case file: {0}", String((err as Error)?.message ?? err)));
  }
}
