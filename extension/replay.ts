/**
 * The one path every replay takes (commands, code lenses, quick fixes, the investigator): check
 * workspace trust and the user's approval of the exact program (logic/approvals.ts: asking in a
 * modal that shows the command, the file and its sha256, kept with that hash), or, for a run that
 * can be replayed without its program, the user's endpoint (logic/agentless.ts), run the job in the worker
 * process with a cancellable progress notification, log every failure in full, and re-read the
 * run so that tests.jsonl's new line reaches the tree, the diagnostics, the lenses and the
 * investigator.
 */
import * as vscode from "vscode";
import path from "node:path";
import { runInWorker, WorkerFailure } from "../core/replay/client";
import type { Progress } from "../core/replay/context";
import { checkFile, planReplay, type Approval } from "../core/replay/approval";
import { parseCommand } from "../core/log/argv";
import { ProgramApprovals } from "./approvals";
import { decidePermit } from "./logic/approvals";
import { buildRequest, describeResult, describeReplay, replayUnavailableReason, type ReplayJob } from "./logic/replay";
import type { Services } from "./services";
import type { AgentlessEndpoint } from "../core/replay/worker-protocol";
import { decideRung, resolveEndpoint, userBaseUrl } from "./logic/agentless";

/** The SecretStorage key of the API key agentless replays send. */
const REPLAY_KEY_SECRET = "causeway.replay.apiKey";

export type ReplayOutcome = { ok: true; result: unknown; message: string } | { ok: false; error: string; cancelled?: boolean };

export interface ReplayOptions {
  title: string;
  /** Aborts the job (the webview's cancel). */
  signal?: AbortSignal;
  onProgress?: (p: Progress) => void;
}

/** Somewhere else a replay may run (the team's workers, team-workers.ts): asked first. */
export interface ReplayElsewhere {
  /** "local", "workers", or undefined when the user dismissed the question. */
  where(job: ReplayJob): Promise<"local" | "workers" | undefined>;
  run(job: ReplayJob, opts: ReplayOptions): Promise<ReplayOutcome>;
}

export class ReplayService {
  private running = 0;
  private elsewhere: ReplayElsewhere | undefined;

  private readonly approvals: ProgramApprovals;

  constructor(private s: Services) {
    this.approvals = new ProgramApprovals(s.context.workspaceState);
  }

  /** Replays are possible here (trusted workspace). */
  get canReplay(): boolean {
    return vscode.workspace.isTrusted;
  }
  get reason(): string | undefined {
    return replayUnavailableReason(vscode.workspace.isTrusted);
  }
  get busy(): boolean {
    return this.running > 0;
  }

  /** Explains why replays are off, with a way to turn them on. */
  async explainRestricted(): Promise<void> {
    const pick = await vscode.window.showWarningMessage(vscode.l10n.t("Causeway: {0}", this.reason ?? ""), "Manage Workspace Trust");
    if (pick) await vscode.commands.executeCommand("workbench.trust.manage");
  }

  /**
   * The approval that covers replaying `program` of the run at `runDir`, resolved against the
   * workspace folder `root`: the stored one when program, file and sha256 match, else the user is
   * asked (modal) with the full command, the file and its hash. A string: why it is refused.
   */
  private async permit(program: string, root: string, runDir: string): Promise<{ approval?: Approval } | string> {
    const d = decidePermit(program, root, this.s.store.runData(runDir), this.approvals.list(), this.s.settings(runDir).allowed.includes(program));
    if (d.kind === "refuse") return d.reason;
    if (d.kind === "run") return { approval: d.approval };
    this.s.log.info(`asking to allow ${program}: ${d.detail.split("\n").slice(0, 3).join("; ")}`);
    const allow = vscode.l10n.t("Allow and replay");
    const pick = await vscode.window.showWarningMessage(d.message, { modal: true, detail: d.detail }, allow);
    if (pick !== allow) return `the program ${program} was not allowed`;
    await this.approvals.approve({ ...d.approval, root, at: new Date().toISOString() });
    this.s.log.info(`allowed ${program}: ${d.approval.file} sha256 ${d.approval.sha256}`);
    return { approval: d.approval };
  }

  /**
   * How to replay the run: its program (approved, or a built-in: rung 3), without it (rung 2: the
   * recorded requests re-sent to the user's endpoint, nothing to approve; else rung 1: the one call
   * that made the action re-sent), or the approval question.
   * A string: why it is refused.
   */
  private async rung(program: string, root: string, runDir: string): Promise<{ approval?: Approval; agentless?: AgentlessEndpoint; rung?: 1 | 2 } | string> {
    const d = decideRung(program, root, this.s.store.runData(runDir), this.approvals.list(), this.s.settings(runDir).allowed.includes(program));
    if (d.kind === "program") return { approval: d.approval };
    if (d.kind === "refuse") return d.reason;
    if (d.kind === "ask") return this.permit(program, root, runDir);
    const cfg = {
      baseUrl: userBaseUrl(vscode.workspace.getConfiguration("causeway").inspect("replay.baseUrl")),
      apiKey: await this.s.context.secrets.get(REPLAY_KEY_SECRET),
    };
    const r = resolveEndpoint(d.apis, cfg, process.env);
    if ("error" in r) return r.error;
    const why = program ? `${program} is not allowed` : "the run names no program";
    this.s.log.info(
      d.rung === 2
        ? `replaying ${path.basename(runDir)} without its program (rung 2): ${why}`
        : `replaying ${path.basename(runDir)} without its program, one recorded call re-sent (rung 1): ${why}; the whole run can't be re-simulated: ${d.why ?? ""}`,
    );
    return { agentless: r.endpoint, rung: d.rung };
  }

  /** Asks for the key agentless replays send (kept in VS Code's SecretStorage; empty: forget it). */
  async setApiKey(): Promise<void> {
    const v = await vscode.window.showInputBox({
      title: vscode.l10n.t("Causeway: API key for replays without the program"),
      prompt: vscode.l10n.t(
        "Sent only to causeway.replay.baseUrl (or OPENAI_/ANTHROPIC_BASE_URL). Kept in VS Code's secret storage. Leave empty to forget the stored key.",
      ),
      password: true,
      ignoreFocusOut: true,
    });
    if (v === undefined) return;
    if (v.trim()) await this.s.context.secrets.store(REPLAY_KEY_SECRET, v.trim());
    else await this.s.context.secrets.delete(REPLAY_KEY_SECRET);
    void vscode.window.showInformationMessage(
      v.trim() ? vscode.l10n.t("Causeway: replay API key stored.") : vscode.l10n.t("Causeway: replay API key forgotten."),
    );
  }

  /** Approves a program the user just recorded from the editor (its command, resolved in `root`). */
  async approveRecorded(program: string, root: string): Promise<void> {
    const plan = planReplay({ program, command: parseCommand(program) }, root);
    if (plan.kind === "builtin") return;
    await this.approvals.approve({ program, file: plan.file, sha256: checkFile(plan.file), root, at: new Date().toISOString() });
  }

  /** Where else replays may run (the team's workers of a connected collector). */
  setElsewhere(e: ReplayElsewhere): void {
    this.elsewhere = e;
  }

  /**
   * Runs a job in the worker, or, for a collector's run, on the team's workers when the user
   * chooses them (nothing runs here then). Never throws: failures come back as { ok: false } and
   * are logged.
   */
  async run(job: ReplayJob, opts: ReplayOptions): Promise<ReplayOutcome> {
    const where = this.elsewhere ? await this.elsewhere.where(job) : "local";
    if (where === undefined) return { ok: false, error: "cancelled", cancelled: true };
    if (where === "workers") {
      this.running++;
      try {
        const out = await this.elsewhere!.run(job, opts);
        if (out.ok) this.s.store.refresh(job.run);
        return out;
      } finally {
        this.running--;
      }
    }
    if (!this.canReplay) {
      void this.explainRestricted();
      return { ok: false, error: this.reason! };
    }
    const entry = this.s.store.get(job.run);
    const analysis = entry ? this.s.store.analyse(entry.dir) : undefined;
    if (!entry || !analysis) return this.fail(`${job.run} is not a run in this workspace`, opts.title);
    const program = analysis.program;
    // programs resolve against the workspace folder holding the run, never a folder beside the run
    const root = entry.root;
    const rung = await this.rung(program, root, entry.dir);
    if (typeof rung === "string") return this.fail(`cannot replay ${path.basename(entry.dir)}: ${rung}`, opts.title);
    const settings = this.s.settings(entry.dir);
    const req = { ...buildRequest(job, program, root, settings, rung.approval), ...(rung.agentless ? { agentless: rung.agentless } : {}) };
    const workerPath = path.join(this.s.context.extensionPath, "dist", "worker.js");
    this.s.log.info(`${opts.title}: ${JSON.stringify({ op: req.op, run: req.run, program, root, rung: rung.rung ?? 3 })}`);
    const t0 = Date.now();
    this.running++;
    try {
      const result = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: `Causeway: ${opts.title}`, cancellable: true },
        async (progress, token) => {
          const ac = new AbortController();
          const abort = () => ac.abort();
          token.onCancellationRequested(abort);
          opts.signal?.addEventListener("abort", abort);
          let last = 0;
          try {
            return await runInWorker(req, {
              workerPath,
              execPath: process.execPath,
              cwd: root,
              signal: ac.signal,
              timeoutMs: settings.timeoutMs,
              onProgress: (p) => {
                opts.onProgress?.(p);
                const pct = p.total > 0 ? Math.min(100, (100 * p.done) / p.total) : 0;
                progress.report({
                  message: `${p.phase}${p.total ? ` ${p.done}/${p.total}` : ""}${p.message ? ` — ${p.message}` : ""}`,
                  increment: pct > last ? pct - last : undefined,
                });
                last = Math.max(last, pct);
              },
            });
          } finally {
            opts.signal?.removeEventListener("abort", abort);
          }
        },
      );
      const message = describeResult(job.op, result);
      this.s.log.info(`${opts.title}: done in ${((Date.now() - t0) / 1000).toFixed(1)} s — ${message}`);
      if (job.op === "replay") for (const l of describeReplay(result)) this.s.log.info(l);
      this.s.store.refresh(entry.dir); // tests.jsonl has a new line (the watcher would catch it too)
      return { ok: true, result, message };
    } catch (err) {
      if (err instanceof WorkerFailure && err.kind === "cancelled") {
        this.s.log.info(`${opts.title}: cancelled`);
        return { ok: false, error: "cancelled", cancelled: true };
      }
      const msg = err instanceof Error ? err.message : String(err);
      if (err instanceof WorkerFailure && err.stderr) this.s.log.error(`worker output:\n${err.stderr}`);
      return this.fail(msg, opts.title);
    } finally {
      this.running--;
    }
  }

  private fail(error: string, title: string): ReplayOutcome {
    this.s.log.error(`${title} failed: ${error}`);
    void vscode.window.showErrorMessage(vscode.l10n.t("Causeway: {0} failed: {1}", title, error), "Show Output").then((p) => p && this.s.log.show(true));
    return { ok: false, error };
  }
}
