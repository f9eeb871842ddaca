/**
 * Run test and Find the cause "on the team's workers", apart from VS Code: the collector's job
 * routes (core/jobs/api.ts) through the connection's {@link CollectorClient} (its token, never
 * a redirect), the job a replay becomes, the job's progress as a replay's progress, and where a
 * replay runs (`causeway.replay.where`).
 *
 * A job names the run, the target, what to remove and the sample sizes, nothing else: the workers
 * take programs, endpoints and keys from their own flags and environment (core/jobs/spec.ts refuses
 * any other field), so nothing of this machine's settings or secrets goes into one.
 */
import { TransferError, type CollectorClient } from "../../core/store/transfer";
import type { JobSpec } from "../../core/jobs/spec";
import type { Progress } from "../../core/replay/context";
import type { ReplayJob, ReplaySettings } from "./replay";
import { t } from "./l10n";

/** `causeway.replay.where`: ask each time, always this machine, always the team's workers. */
export type Where = "ask" | "local" | "workers";

/** A job as the collector shows it (core/jobs/api.ts jobView). */
export interface TeamJob {
  id: string;
  run_id: string;
  kind: "attribute" | "test";
  /** queued, running, done, failed or cancelled (another word from a newer collector: still going). */
  status: string;
  asked_by: string;
  progress: { tests: number; pairs: number; model_calls: number; message?: string } | null;
  result: Record<string, unknown> | null;
  error: string | null;
  workers: string[];
}

export const FINISHED = new Set(["done", "failed", "cancelled"]);

/** A refusal of the collector's, with its HTTP status (401: the token may not submit jobs). */
export class TeamJobError extends Error {
  constructor(
    message: string,
    readonly status = 0,
  ) {
    super(message);
    this.name = "TeamJobError";
  }
}

const JOB_ID = /^[0-9a-f-]{36}$/;

/** The job routes of one collector, with the connection's token. */
export class TeamJobs {
  constructor(private readonly client: CollectorClient) {}

  private async call(method: string, route: string, body?: unknown): Promise<Record<string, unknown>> {
    const res = await this.client.request(method, route, body === undefined ? undefined : JSON.stringify(body));
    let v: unknown;
    const text = await res.text();
    try {
      v = JSON.parse(text);
    } catch {
      v = { error: text.slice(0, 200) };
    }
    if (!res.ok) {
      const why = String((v as { error?: unknown })?.error ?? res.statusText).slice(0, 300);
      throw new TeamJobError(
        res.status === 401
          ? t("the collector's token may not do this ({0}): submitting needs a token with the jobs scope", why)
          : t("the collector answered HTTP {0}: {1}", res.status, why),
        res.status,
      );
    }
    if (!v || typeof v !== "object" || Array.isArray(v)) throw new TeamJobError(t("the collector's answer is not a JSON object"));
    return v as Record<string, unknown>;
  }

  /**
   * Whether the collector runs jobs (a PostgreSQL store with workers) and this token may submit
   * them: an empty job is sent, which the collector refuses with 401 without the jobs scope, 404
   * without job routes, and 400 (the job is not valid; nothing is queued) when the token may submit;
   * undefined when the collector did not answer.
   */
  async available(): Promise<boolean | undefined> {
    try {
      await this.call("POST", "/v1/jobs", {});
      return false; // an empty job accepted: not a collector this client understands
    } catch (err) {
      // undefined: no answer (unreachable, restarting): ask again next time
      if (err instanceof TeamJobError) return err.status >= 500 ? undefined : err.status === 400;
      if (err instanceof TransferError) return undefined;
      throw err;
    }
  }

  async submit(spec: JobSpec): Promise<TeamJob> {
    return jobOf(await this.call("POST", "/v1/jobs", spec));
  }

  async get(id: string): Promise<TeamJob> {
    if (!JOB_ID.test(id)) throw new TeamJobError(t("{0} is not a job id", JSON.stringify(id.slice(0, 60))));
    return jobOf(await this.call("GET", `/v1/jobs/${id}`));
  }

  /** Asks the collector to stop the job (its submitter's token); whether it was still going. */
  async cancel(id: string): Promise<boolean> {
    if (!JOB_ID.test(id)) throw new TeamJobError(t("{0} is not a job id", JSON.stringify(id.slice(0, 60))));
    return (await this.call("POST", `/v1/jobs/${id}/cancel`)).cancelled === true;
  }

  /**
   * Follows a job until it finishes, reporting each change of its progress; "detached" when
   * `signal` aborts first (the job goes on). A collector that is briefly away (restarting, its
   * database restarting) is asked again, `patience` times in a row at most.
   */
  async follow(
    id: string,
    opts: { signal?: AbortSignal; onUpdate?: (j: TeamJob) => void; pollMs?: number; patience?: number } = {},
  ): Promise<TeamJob | "detached"> {
    const pollMs = opts.pollMs ?? 1000;
    let failures = 0;
    let last = "";
    for (;;) {
      if (opts.signal?.aborted) return "detached";
      let j: TeamJob | undefined;
      try {
        j = await this.get(id);
        failures = 0;
      } catch (err) {
        const status = (err as { status?: number }).status ?? 0;
        if ((status > 0 && status < 500) || ++failures > (opts.patience ?? 60)) throw err;
      }
      if (j && FINISHED.has(j.status)) return j;
      const seen = j ? JSON.stringify([j.status, j.progress]) : last;
      if (j && seen !== last) opts.onUpdate?.(j);
      last = seen;
      await wait(pollMs, opts.signal);
    }
  }
}

function wait(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener("abort", done, { once: true });
  });
}

/** A job from the collector's answer, checked as untrusted data. */
export function jobOf(v: unknown): TeamJob {
  const j = v as Partial<TeamJob>;
  if (typeof j.id !== "string" || !JOB_ID.test(j.id) || typeof j.status !== "string" || typeof j.run_id !== "string")
    throw new TeamJobError(t("the collector's answer is not a job"));
  const p = j.progress;
  const num = (x: unknown) => (typeof x === "number" && Number.isFinite(x) && x >= 0 ? x : 0);
  return {
    id: j.id,
    run_id: j.run_id,
    kind: j.kind === "attribute" ? "attribute" : "test",
    status: j.status,
    asked_by: typeof j.asked_by === "string" ? j.asked_by : "",
    progress:
      p && typeof p === "object"
        ? {
            tests: num(p.tests),
            pairs: num(p.pairs),
            model_calls: num(p.model_calls),
            ...(typeof p.message === "string" ? { message: p.message.slice(0, 300) } : {}),
          }
        : null,
    result: j.result && typeof j.result === "object" && !Array.isArray(j.result) ? j.result : null,
    error: typeof j.error === "string" ? j.error.slice(0, 2000) : null,
    workers: Array.isArray(j.workers) ? j.workers.filter((w): w is string => typeof w === "string").map((w) => w.slice(0, 200)) : [],
  };
}

/**
 * The job a replay becomes on the collector's run `runId`, with the same sample sizes a local one
 * would use; a string says why it runs on this machine only (a replay, a fix check, several inputs
 * removed at once). Only the fields core/jobs/spec.ts allows: never a program, endpoint or key.
 */
export function jobSpecOf(job: ReplayJob, runId: string, s: Pick<ReplaySettings, "n" | "nMax">): JobSpec | string {
  if (job.op === "test") {
    const remove = typeof job.intervention === "string" ? job.intervention : job.intervention.length === 1 ? job.intervention[0] : undefined;
    if (!remove) return t("a test that removes several inputs at once runs on this machine only");
    return { kind: "test", run_id: runId, target: job.target, remove, n: job.n ?? s.n, n_max: job.nMax ?? s.nMax };
  }
  if (job.op === "attribute") {
    return {
      kind: "attribute",
      run_id: runId,
      target: job.target,
      ...(job.suspects?.length ? { suspects: [...job.suspects] } : {}),
      n: job.n ?? s.n,
      n_max: job.nMax ?? s.nMax,
    };
  }
  return job.op === "fixCheck" ? t("a fix check runs on this machine only") : t("a replay runs on this machine only");
}

/** A job's progress as a replay's (the notification and the investigator show it alike). */
export function jobProgress(j: TeamJob): Progress {
  if (j.status === "queued" || !j.progress) return { phase: t("queued on the team's workers"), done: 0, total: 0 };
  const p = j.progress;
  const phase = j.kind === "attribute" ? t("test {0} on the team's workers", p.tests + 1) : t("on the team's workers");
  return { phase, done: p.pairs, total: 0, message: p.message ?? t("{0} pairs, {1} model calls", p.pairs, p.model_calls) };
}

export type TeamOutcome = { ok: true; result: Record<string, unknown>; askedBy: string; workers: string[] } | { ok: false; error: string; cancelled?: boolean };

/** What a finished job gives: its result, or why there is none (never a verdict from a failed job). */
export function jobOutcome(j: TeamJob): TeamOutcome {
  if (j.status === "done" && j.result) return { ok: true, result: j.result, askedBy: j.asked_by, workers: j.workers };
  if (j.status === "cancelled") return { ok: false, error: t("the job was cancelled"), cancelled: true };
  return { ok: false, error: t("the job {0} on the team's workers: {1}", j.status, j.error ?? t("no result")) };
}

/** The user's `causeway.replay.where` (its user value only: a workspace can't send runs elsewhere). */
export function whereSetting(inspected: { globalValue?: unknown } | undefined): Where {
  const v = inspected?.globalValue;
  return v === "local" || v === "workers" ? v : "ask";
}

/**
 * Where a Run test or Find the cause runs: this machine unless the run is a collector's whose
 * jobs this connection may submit, then as the setting says ("ask": a quick pick).
 */
export function decideWhere(where: Where, offered: boolean): "local" | "workers" | "ask" {
  return offered ? where : "local";
}
