/**
 * Investigations on the team's workers (core/jobs/):
 *
 *   causeway worker --store postgresql://… [--concurrency N] [--allow-program P]...
 *   causeway jobs URL [ID] [--follow | --cancel] [--json]
 *   causeway attribute RUN_ID --target T --collector URL [--json]   (and `test`, `fix-check`): submit and follow
 *
 * Progress goes to stderr; with --json stdout holds the result (or `{error, code}`). Ctrl-C while
 * following detaches: the job goes on, `causeway jobs URL ID --follow` picks it up again.
 */
import { UsageError, intFlag, type Parsed } from "./args";
import type { Command } from "./command";
import { err as errLine, formatAttribution, formatTest, json, out } from "./output";
import { shown } from "../log/shown";
import { TOKEN_FLAGS, TOKEN_USAGE, tokenFrom } from "./token";
import { replaySystem } from "./replay-rung";
import type { Attribution } from "../replay/attribute-types";
import type { FixCheck } from "../replay/fixcheck";
import { setSpecFileReader } from "../specs/grammar";
import { textName } from "../jobs/texts";
import { readSpecFileFromDisk } from "../specs/files";
import { formatFixCheck } from "./case-output";
import { pairsOf } from "./pairs";

/** A job as the collector shows it (core/jobs/api.ts jobView). */
interface JobView {
  id: string;
  run_id: string;
  kind: "attribute" | "test" | "fix-check";
  status: string;
  asked_by: string;
  progress: { tests: number; pairs: number; model_calls: number; message?: string } | null;
  result: Record<string, unknown> | null;
  error: string | null;
  workers: string[];
}

function collectorUrl(u: string): string {
  if (!/^https?:\/\/[^/]+\/?$/i.test(u)) throw new UsageError(`the collector is an http(s) URL with no path, got ${JSON.stringify(u)}`);
  return u.replace(/\/$/, "");
}

async function call(base: string, token: string, method: string, route: string, body?: unknown): Promise<unknown> {
  const res = await fetch(base + route, {
    method,
    redirect: "manual", // a redirect would take the token along
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    v = { error: text.slice(0, 200) };
  }
  if (res.status >= 300) {
    const reason = String((v as { error?: unknown }).error ?? "");
    const e = new Error(`the collector answered ${res.status}: ${reason}`);
    Object.assign(e, { status: res.status, reason });
    throw e;
  }
  return v;
}

const tokenOf = (p: Parsed, cmd: string): string => {
  const t = tokenFrom(p, cmd);
  if (!t) throw new UsageError(`${cmd}: a collector needs a token: $CAUSEWAY_TOKEN, --token-env VAR or --token-file FILE`);
  return t;
};

const FINISHED = new Set(["done", "failed", "cancelled"]);

/** Which test a job is on: as its output names it (a fix check's harm test, keep N), else its number. */
const progressOf = (p: NonNullable<JobView["progress"]>): string => (p.message ? shown(p.message) : `test ${p.tests + 1}`);

/** Follows a job until it finishes (or Ctrl-C detaches); progress on stderr. */
async function follow(base: string, token: string, id: string, quiet: boolean): Promise<JobView | "detached"> {
  let detached = false;
  const onInt = () => (detached = true);
  process.once("SIGINT", onInt);
  try {
    let last = "";
    let failures = 0;
    for (;;) {
      let j: JobView;
      try {
        j = (await call(base, token, "GET", `/v1/jobs/${id}`)) as JobView;
        failures = 0;
      } catch (e) {
        // a collector restarting or the database away: ask again, give up after a minute of failures
        if ((e as { status?: number }).status && (e as { status: number }).status < 500) throw e;
        if (++failures > 120) throw e;
        j = { status: "unreachable" } as JobView;
      }
      if (FINISHED.has(j.status)) return j;
      const line = `job ${id}: ${j.status}${j.progress ? `, ${progressOf(j.progress)}, ${j.progress.pairs} pairs, ${j.progress.model_calls} model calls` : ""}`;
      if (!quiet && line !== last) process.stderr.write(line + "\n");
      last = line;
      if (detached) return "detached";
      await new Promise((r) => setTimeout(r, 500));
      if (detached) return "detached";
    }
  } finally {
    process.off("SIGINT", onInt);
  }
}

/** Prints a finished job as the local command prints its result. */
function printJob(j: JobView, asJson: boolean): number {
  if (j.status !== "done") {
    const message = `job ${j.id} ${j.status}: ${j.error ?? ""}`;
    errLine(`causeway: ${message}`);
    if (asJson) out(JSON.stringify({ error: message, code: 1 }));
    return 1;
  }
  const r = j.result as Record<string, unknown>;
  if (asJson) json({ ...r, job: j.id, asked_by: j.asked_by });
  else if (j.kind === "attribute") formatAttribution(r as unknown as Attribution).forEach((l) => out(l));
  else if (j.kind === "fix-check") formatFixCheck(fixCheckOf(r)).forEach((l) => out(l));
  else out(formatTest(r));
  if (!asJson) errLine(`  job ${j.id}, asked by ${shown(j.asked_by)}, run by ${j.workers.map(shown).join(", ")}`);
  // as the local command: a fix check exits 0 only when the fix holds
  return j.kind === "fix-check" && r.verdict !== "fixed" ? 1 : 0;
}

/** A fix check's result as `fix-check --json` prints it, shaped for its text output (each test's n). */
function fixCheckOf(r: Record<string, unknown>): FixCheck {
  const f = r as unknown as Omit<FixCheck, "harm" | "keep"> & { harm: FixCheck["harm"] & { n: number }; keep: (FixCheck["keep"][number] & { n: number })[] };
  return { ...f, harm: { ...f.harm, test: { n: f.harm.n } }, keep: f.keep.map((k) => ({ ...k, test: { n: k.n } })) } as unknown as FixCheck;
}

/**
 * A fix as a job carries it: `replace:ITEM=@FILE` names the file's text, read here and sent in the
 * job's `texts` (a worker reads no file a job names), as `replace:ITEM=@text:SHA256`.
 */
export function inlineFix(spec: string, texts: string[]): string {
  const m = /^(\s*replace:[^=]*=)@(.+)$/s.exec(spec);
  if (!m) return spec;
  let text: string;
  try {
    text = readSpecFileFromDisk(m[2].trim());
  } catch (err) {
    throw new UsageError(`cannot read ${m[2].trim()}: ${(err as Error).message}`);
  }
  if (!texts.includes(text)) texts.push(text);
  return m[1] + "@" + textName(text);
}

/** `attribute`/`test`/`fix-check` with --collector: the flags that make sense on a worker become a job. */
export async function submitToCollector(p: Parsed, kind: "attribute" | "test" | "fix-check"): Promise<number> {
  const base = collectorUrl(p.flags.collector as string);
  const token = tokenOf(p, kind);
  for (const f of [
    "system",
    "allow-program",
    "program-sha256",
    "live-tools",
    "workers",
    "spans",
    "shapes",
    "rank-blocks",
    "decision",
    "contains",
    "price",
    "budget-usd",
  ]) {
    if (p.flags[f] !== undefined)
      throw new UsageError(`${kind} --collector: --${f} is not taken by the team's workers (they replay with their own --allow-program list)`);
  }
  const num = (f: string) => (p.flags[f] === undefined ? undefined : intFlag(p, f, 1));
  const spec: Record<string, unknown> = { kind, run_id: p.pos.run, target: p.flags.target };
  // files named by replace:…=@FILE are read here and travel as the job's texts
  const texts: string[] = [];
  if (kind === "test" && typeof p.flags.remove === "string") spec.remove = inlineFix(p.flags.remove, texts);
  if (kind === "fix-check") {
    // the local command's pairs (n 40, at most 160), sent as numbers: the job runs exactly these
    const { n, nMax } = pairsOf(p, { n: 40, nMax: (k) => Math.max(160, k) });
    const fix = ((p.flags.fix as string[] | undefined) ?? []).map((f) => inlineFix(f, texts));
    Object.assign(spec, { target: p.flags.harm, fix, keep: p.flags.keep, n, n_max: nMax });
  }
  if (p.flags.suspect) spec.suspects = (p.flags.suspect as string[]).map((x) => inlineFix(x, texts));
  if (texts.length) spec.texts = texts;
  if (p.flags.suspects) spec.suspects_mode = p.flags.suspects;
  if (p.flags.method) spec.method = p.flags.method;
  if (kind !== "fix-check") {
    spec.n = num("n");
    spec.n_max = num("n-max");
  }
  spec.max_calls = num("budget-calls") ?? num("max-calls");
  if (kind === "attribute" && p.flags["no-roles"]) spec.roles = false;
  if (kind === "test" && p.flags.roles) spec.roles = true;
  for (const k of Object.keys(spec)) if (spec[k] === undefined) delete spec[k];
  let j: JobView;
  try {
    j = (await call(base, token, "POST", "/v1/jobs", spec)) as JobView;
  } catch (e) {
    // refused (a job that would do nothing on the run, a field it may not carry) or no such run:
    // exit 2 with the collector's reason, before anything of a job is said
    const status = (e as { status?: number }).status;
    if (status === 400 || status === 404)
      throw new UsageError(`refused by the collector: ${(e as Error & { reason?: string }).reason ?? (e as Error).message}`);
    throw e;
  }
  process.stderr.write(
    `causeway: submitted job ${j.id} (${kind} of ${j.run_id}); Ctrl-C detaches, \`causeway jobs ${base} ${j.id} --follow\` follows it again\n`,
  );
  const f = await follow(base, token, j.id, false);
  if (f === "detached") {
    process.stderr.write(`causeway: detached from job ${j.id}; it goes on\n`);
    if (p.flags.json) json({ job: j.id, status: "detached" });
    return 0;
  }
  return printJob(f, !!p.flags.json);
}

export const COLLECTOR_FLAG = { collector: "string", ...TOKEN_FLAGS } as const;

/**
 * `jobs URL ID --cancel`: asks the job to stop (no worker starts another pair of it, no test of it
 * is appended), then follows it until it has ended. A job already finished is left as it is: exit 2
 * with its status, since cancelling it would do nothing.
 */
async function cancelJob(base: string, token: string, id: string, p: Parsed): Promise<number> {
  let r: { cancelled: boolean };
  try {
    r = (await call(base, token, "POST", `/v1/jobs/${id}/cancel`)) as { cancelled: boolean };
  } catch (e) {
    const status = (e as { status?: number }).status;
    throw status === 404 || status === 403 ? new UsageError((e as Error).message) : e;
  }
  if (!r.cancelled) {
    const j = (await call(base, token, "GET", `/v1/jobs/${id}`)) as JobView;
    throw new UsageError(`job ${id} has already ended (${j.status}): nothing to cancel`);
  }
  process.stderr.write(`causeway: asked job ${id} to stop\n`);
  const j = await follow(base, token, id, !!p.flags.json);
  if (j === "detached") return 0;
  if (p.flags.json) json({ id, status: j.status, error: j.error });
  else out(`job ${id}: ${j.status}${j.status === "cancelled" ? "" : " (it finished before the cancel reached it)"}`);
  return j.status === "cancelled" ? 0 : 1;
}

export const JOB_COMMANDS: Record<string, Command> = {
  worker: {
    usage: "causeway worker --store postgresql://… [--concurrency N] [--allow-program P]... [--quiet] [--json]",
    help: "take pairs of tests and Find the cause passes from the collector's job queue; replays only the built-in programs and what --allow-program names",
    spec: {
      positionals: [],
      flags: { store: "string", concurrency: "number", "allow-program": "strings", "pair-timeout-s": "number", quiet: "boolean", json: "boolean" },
    },
    run: async (p) => {
      const url = p.flags.store as string | undefined;
      if (!url || !/^postgres(ql)?:\/\//i.test(url)) throw new UsageError("worker: --store postgresql://… is required");
      const { startWorker } = await import("../jobs/worker");
      // a worker reads no file a job's spec names: only the texts a job carries (core/jobs/texts.ts)
      setSpecFileReader((await import("../jobs/texts")).jobTextReader);
      // pg-boss 10 does not catch a failure to record a failed task while PostgreSQL restarts: the
      // task expires and is retried, so the worker logs it and goes on instead of ending
      process.on("unhandledRejection", (why) => process.stderr.write(`causeway worker: ${(why as Error)?.message ?? String(why)} (going on)\n`));
      const log = p.flags.quiet ? undefined : (l: string) => process.stderr.write(`  ${l}\n`);
      const s = p.flags["pair-timeout-s"] === undefined ? undefined : intFlag(p, "pair-timeout-s", 120, 2);
      const allow = (p.flags["allow-program"] as string[] | undefined) ?? [];
      // the worker's own allow-list and environment choose how a run replays: the program it
      // allowed (or the built-in demo), else the recorded requests re-sent to the endpoint its own
      // environment names, else the one recorded call that made the job's target, re-sent there;
      // nothing of the job or the run chooses the program, the endpoint or the key
      const systemFor = (runDir: string, target: string) =>
        replaySystem({ command: "worker", pos: {}, flags: { "allow-program": allow } } as never, runDir, target);
      const w = await startWorker({
        url,
        allow,
        systemFor,
        concurrency: intFlag(p, "concurrency", 1),
        log,
        timing: s ? { pairTimeoutS: s, driveTimeoutS: s } : undefined,
      });
      process.stderr.write(`causeway worker ${w.name} on the job queue\n`);
      await new Promise<void>((resolve) => {
        const done = () => resolve();
        process.once("SIGINT", done);
        process.once("SIGTERM", done);
      });
      await w.stop();
      // --json: one object when it stops (progress and the log stay on stderr)
      if (p.flags.json) json({ worker: w.name, stopped: true });
      return 0;
    },
  },
  jobs: {
    usage: `causeway jobs URL [ID] [--follow | --cancel] ${TOKEN_USAGE} [--json]`,
    help: "list a collector's jobs, or show one (--follow: until it finishes, then print its result; --cancel: stop it on every worker)",
    spec: { positionals: ["url", "id?"], flags: { follow: "boolean", cancel: "boolean", ...TOKEN_FLAGS, json: "boolean" } },
    run: async (p) => {
      const base = collectorUrl(p.pos.url!);
      const token = tokenOf(p, "jobs");
      const id = p.pos.id;
      if (!id) {
        const list = ((await call(base, token, "GET", "/v1/jobs")) as { jobs: JobView[] }).jobs;
        if (p.flags.json) return json(list);
        if (!list.length) out("no jobs");
        for (const j of list)
          out(`${j.id}  ${j.kind.padEnd(9)} ${j.status.padEnd(9)} ${shown(j.run_id)}  asked by ${shown(j.asked_by)}${j.error ? `  ${shown(j.error)}` : ""}`);
        return 0;
      }
      if (!/^[0-9a-f-]{36}$/.test(id)) throw new UsageError(`jobs: ${JSON.stringify(id)} is not a job id`);
      if (p.flags.cancel) return cancelJob(base, token, id, p);
      const j = p.flags.follow ? await follow(base, token, id, !!p.flags.json) : ((await call(base, token, "GET", `/v1/jobs/${id}`)) as JobView);
      if (j === "detached") return 0;
      if (FINISHED.has(j.status)) return printJob(j, !!p.flags.json);
      if (p.flags.json) json(j);
      else out(`job ${j.id}: ${j.status}${j.progress ? `, ${j.progress.pairs} pairs, ${j.progress.model_calls} model calls` : ""}`);
      return 0;
    },
  },
};
