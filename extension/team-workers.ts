/**
 * Run test and Find the cause "on the team's workers": for a run opened from a collector whose job
 * routes take this connection's token, the replay is offered there or on this machine (the
 * setting `causeway.replay.where`: ask, local or workers). On the workers it is submitted through
 * the collector's job routes (logic/team-jobs.ts) and followed in a cancellable notification
 * (cancelling cancels the job); the finished result shows in the investigator as a local one
 * does, and the tests the job system appended to the collector's copy come down into the cache
 * (every other window with the run open takes them on its own: logic/remote-tests.ts).
 *
 * Nothing of this machine goes into a job: no program, endpoint, key or setting besides the sample
 * sizes. The workers replay with their own allow-list and environment.
 */
import * as vscode from "vscode";
import path from "node:path";
import type { CollectorConnection } from "./collector";
import type { Services } from "./services";
import type { ReplayJob } from "./logic/replay";
import { describeResult } from "./logic/replay";
import { TeamJobError, decideWhere, jobOutcome, jobProgress, jobSpecOf, whereSetting, type TeamJob } from "./logic/team-jobs";
import type { ReplayOptions, ReplayOutcome } from "./replay";

export class TeamWorkers {
  constructor(
    private readonly s: Services,
    private readonly conn: CollectorConnection,
  ) {}

  /**
   * Where `job` runs: "workers", "local", or undefined when the user dismissed the question
   * (nothing runs). Only a collector's run whose collector takes this token's jobs is offered.
   */
  async where(job: ReplayJob): Promise<"local" | "workers" | undefined> {
    if (job.op !== "test" && job.op !== "attribute") return "local";
    const team = await this.conn.teamJobs(job.run);
    const offered = !!team && typeof jobSpecOf(job, team.runId, this.s.settings(job.run)) !== "string";
    const d = decideWhere(whereSetting(vscode.workspace.getConfiguration("causeway").inspect("replay.where")), offered);
    if (d !== "ask") return d;
    const workers = vscode.l10n.t("On the team's workers");
    const local = vscode.l10n.t("On this machine");
    const pick = await vscode.window.showQuickPick(
      [
        {
          label: workers,
          value: "workers" as const,
          detail: vscode.l10n.t(
            "The collector's job queue: progress here, the result for everyone with the run open. The workers replay with their own programs, endpoints and keys.",
          ),
        },
        { label: local, value: "local" as const, detail: vscode.l10n.t("In a worker process here, with this machine's approvals and endpoint.") },
      ],
      {
        title: vscode.l10n.t("Where to run it ({0})", path.basename(job.run)),
        placeHolder: vscode.l10n.t("Set causeway.replay.where to stop asking"),
        ignoreFocusOut: true,
      },
    );
    return pick?.value;
  }

  /** Submits the job and follows it. Never throws: failures come back as { ok: false } and are logged. */
  async run(job: ReplayJob, opts: ReplayOptions): Promise<ReplayOutcome> {
    const team = await this.conn.teamJobs(job.run);
    const spec = team ? jobSpecOf(job, team.runId, this.s.settings(job.run)) : "the run is not open from a collector that runs jobs";
    if (!team || typeof spec === "string") return this.fail(String(spec), opts.title);
    let submitted: TeamJob;
    try {
      submitted = await team.jobs.submit(spec);
    } catch (err) {
      if (err instanceof TeamJobError && err.status === 401) this.conn.refuseJobs(err.message);
      return this.fail((err as Error).message, opts.title);
    }
    this.s.log.info(`${opts.title}: submitted job ${submitted.id} (${spec.kind} of ${spec.run_id}) to the team's workers`);
    const t0 = Date.now();
    const ac = new AbortController();
    let finished: TeamJob | "detached";
    try {
      finished = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: vscode.l10n.t("Causeway: {0} (on the team's workers)", opts.title), cancellable: true },
        async (progress, token) => {
          const abort = () => ac.abort();
          token.onCancellationRequested(abort);
          opts.signal?.addEventListener("abort", abort);
          try {
            return await team.jobs.follow(submitted.id, {
              signal: ac.signal,
              onUpdate: (j) => {
                const p = jobProgress(j);
                opts.onProgress?.(p);
                progress.report({ message: `${p.phase}${p.done ? ` ${p.done}` : ""}${p.message ? ` — ${p.message}` : ""}` });
              },
            });
          } finally {
            opts.signal?.removeEventListener("abort", abort);
          }
        },
      );
    } catch (err) {
      return this.fail(vscode.l10n.t("following job {0}: {1}", submitted.id, (err as Error).message), opts.title);
    }
    if (finished === "detached") {
      const stopped = await team.jobs
        .cancel(submitted.id)
        .catch((err: Error) => (this.s.log.warn(`job ${submitted.id}: not cancelled: ${err.message}`), false));
      this.s.log.info(`${opts.title}: cancelled${stopped ? ` (job ${submitted.id} cancelled on the collector)` : ""}`);
      return { ok: false, error: "cancelled", cancelled: true };
    }
    const out = jobOutcome(finished);
    if (!out.ok) {
      if (out.cancelled) return { ok: false, error: out.error, cancelled: true };
      return this.fail(out.error, opts.title);
    }
    // the job system appended the finished tests to the collector's copy: take them now
    await this.conn.refreshTests(job.run);
    const message = vscode.l10n.t(
      "{0} (on the team's workers: asked by {1}, run by {2})",
      describeResult(job.op, out.result),
      out.askedBy,
      out.workers.join(", ") || "?",
    );
    this.s.log.info(`${opts.title}: job ${finished.id} done in ${((Date.now() - t0) / 1000).toFixed(1)} s — ${message}`);
    return { ok: true, result: out.result, message };
  }

  private fail(error: string, title: string): ReplayOutcome {
    this.s.log.error(`${title} failed: ${error}`);
    void vscode.window.showErrorMessage(vscode.l10n.t("Causeway: {0} failed: {1}", title, error), "Show Output").then((p) => p && this.s.log.show(true));
    return { ok: false, error };
  }
}
