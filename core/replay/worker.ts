/**
 * The replay worker: its own bundle (dist/worker.js), run as a child process so that the agent
 * program being replayed never runs inside the extension host. Reads one request on stdin, streams
 * progress and the result on stdout (see worker-protocol.ts), and exits. It runs only what the
 * request's approval covers (approval.ts): the same program string, file and sha256; or, asked for
 * a replay without the program, no program at all: the run's recorded requests re-sent to the
 * endpoint the request names, tools from the tape (rung 2), else the one recorded call that made
 * the target action (rung 1; worker-rung.ts).
 */
import { readRun, type RunData } from "../log/reader";
import { SpecError } from "../specs/grammar";
import { allowSpecFiles } from "../specs/files";
import { attribute } from "./attribute";
import { narrowAttribution } from "./narrow";
import { fixCheck } from "./fixcheck";
import { ReplayContext, ReplayError } from "./context";
import { decisionTest } from "./decision-test";
import { replayAndDiff } from "./replay-diff";
import { runTest } from "./run-test";
import { ProgramError } from "./loader";
import { ApprovalError, checkApproval, planReplay } from "./approval";
import { loadPlan } from "./approved";
import type { WorkerMessage, WorkerRequest } from "./worker-protocol";
import { commandRunRefusal, recordedCommand } from "./command";
import { RunModel } from "../graph/model";
import type { System } from "../sdk/system";
import { EndpointError } from "./endpoint-replay";
import { agentlessSystem } from "./worker-rung";

function send(m: WorkerMessage): void {
  process.stdout.write(JSON.stringify(m) + "\n");
}

/** Rung 3: the approved program, re-run with tools from the tape. */
async function programSystem(req: WorkerRequest, run: RunData): Promise<System> {
  const model = new RunModel(run);
  if (String(model.start.program ?? "") !== req.program) {
    throw new ApprovalError(`the run's program is ${JSON.stringify(model.start.program ?? null)}, not ${JSON.stringify(req.program)}`);
  }
  // what runs is planned from the approved program string alone; the run must agree with it
  const plan = planReplay({ program: req.program, command: recordedCommand(model) }, req.root);
  checkApproval(plan, req.approval);
  if (plan.kind === "command") {
    const why = req.op === "test" && req.liveTools ? null : commandRunRefusal(model);
    if (why) throw new ReplayError(`can't replay this run: ${why}`);
  }
  return (await loadPlan(plan, run, req.approval?.sha256)).system;
}

async function handle(req: WorkerRequest): Promise<unknown> {
  const run = readRun(req.run);
  const system = req.agentless ? agentlessSystem(req, run) : await programSystem(req, run);
  const onProgress = (p: { phase: string; done: number; total: number; message?: string }) => send({ type: "progress", ...p });
  switch (req.op) {
    case "test": {
      const ctx = new ReplayContext(run, system, { liveTools: !!req.liveTools });
      return runTest(ctx, { intervention: req.intervention, target: req.target, n: req.n, nMax: req.nMax, workers: req.workers, onProgress });
    }
    case "attribute": {
      const ctx = new ReplayContext(run, system);
      const a = await attribute(ctx, {
        target: req.target,
        suspects: req.suspects,
        n: req.n,
        nMax: req.nMax,
        maxCalls: req.maxCalls,
        workers: req.workers,
        roles: req.roles,
        onProgress,
      });
      if (!req.spans) return a;
      // the causing span of each confirmed input, and how two or more causes combine
      const nr = await narrowAttribution(ctx, a, { n: req.n, nMax: req.nMax, workers: req.workers, onProgress });
      return {
        ...a,
        narrowed: {
          spans: nr.spans.map(({ tests, ...s }) => ({ ...s, tests: tests.length })),
          shapes: nr.shapes.map(({ tests, ...s }) => ({
            ...s,
            tests: Object.fromEntries(Object.entries(tests).map(([k, t]) => [k, { effect: t.effect, ci: t.ci, verdict: t.verdict, n: t.n }])),
          })),
          skipped: nr.skipped,
        },
      };
    }
    case "fixCheck": {
      const ctx = new ReplayContext(run, system);
      const f = await fixCheck(ctx, { fix: req.fix, harm: req.harm, keep: req.keep, n: req.n, nMax: req.nMax, workers: req.workers, onProgress });
      return {
        ...f,
        rung: f.harm.test.rung,
        harm: { ...f.harm, test: undefined, n: f.harm.test.n },
        keep: f.keep.map((k) => ({ ...k, test: undefined, n: k.test.n })),
      };
    }
    case "decision": {
      const ctx = new ReplayContext(run, system);
      return decisionTest(ctx, { decision: req.decision, intervention: req.intervention, contains: req.contains, n: req.n, onProgress });
    }
    case "replay": {
      const ctx = new ReplayContext(run, system);
      return replayAndDiff(ctx, { remove: req.remove, seed: req.seed });
    }
    default:
      throw new Error(`unknown op ${JSON.stringify((req as { op?: unknown }).op)}`);
  }
}

function kindOf(err: unknown): Extract<WorkerMessage, { type: "error" }>["kind"] {
  if (err instanceof ApprovalError) return "not-allowed";
  if (err instanceof ProgramError) return "program";
  if (err instanceof ReplayError || err instanceof EndpointError || (err instanceof Error && err.name === "ReplayError")) return "replay";
  if (err instanceof SpecError) return "spec";
  return "internal";
}

async function main(): Promise<void> {
  // the requests name fixes the user wrote (replace:…=@FILE); the webview's are refused before they get here
  allowSpecFiles();
  let input = "";
  process.stdin.setEncoding("utf8");
  for await (const chunk of process.stdin) {
    input += chunk;
    if (input.includes("\n")) break;
  }
  let req: WorkerRequest;
  try {
    req = JSON.parse(input.split("\n")[0]);
  } catch {
    send({ type: "error", message: "the worker expects one JSON request line on stdin", kind: "internal" });
    process.exitCode = 1;
    return;
  }
  try {
    const result = await handle(req);
    send({ type: "result", op: req.op, result });
    process.exitCode = 0;
  } catch (err) {
    send({ type: "error", message: err instanceof Error ? err.message : String(err), kind: kindOf(err) });
    process.exitCode = 1;
  }
  // a program may leave timers or sockets open; the worker's job is done
  setTimeout(() => process.exit(process.exitCode ?? 0), 50).unref();
}

process.setSourceMapsEnabled?.(true);
// a program's stray output must not corrupt the protocol: route console.log to stderr
console.log = (...a: unknown[]) => process.stderr.write(a.map(String).join(" ") + "\n");
void main();
