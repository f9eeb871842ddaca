/**
 * Which rung a replaying command (test, attribute, matrix, fix-check, case --investigate) climbs:
 *
 *   rung 3  the program re-runs          when the program is allowed (--system, a built-in, or
 *                                         --allow-program naming the run's program)
 *   rung 2  agentless re-simulation       else, when every model call's full request was recorded
 *           from the recorded requests    (the gateway, the preload, the SDK adapters)
 *   rung 1  one recorded call re-sent      else, when the call that made the target action was
 *                                         recorded in full and relies on no provider state;
 *                                         `test --decision SEQ` (test-endpoint)
 *
 * Rung 2 sends model calls to the endpoint the caller names (--base-url, else OPENAI_BASE_URL /
 * ANTHROPIC_BASE_URL) with the caller's key (--api-key-env VAR, else OPENAI_API_KEY /
 * ANTHROPIC_API_KEY), never to an address or with a key the run names: a run file is
 * attacker-controlled. No tool runs and no program starts, so no allow-list is needed.
 */
import { UsageError, intFlag, type Parsed } from "./args";
import { singleQuote } from "../log/argv";
import { readRun } from "../log/reader";
import { forTerminal } from "../log/shown";
import { RunModel } from "../graph/model";
import { isBuiltin } from "../replay/programs";
import { checkDefaultEndpoint, EndpointError, rebuildRequest } from "../replay/endpoint-replay";
import { AgentlessSystem } from "../replay/agentless/system";
import type { EndpointOptions } from "../replay/agentless/wire";
import type { System } from "../sdk/system";
import type { RunData } from "../log/reader";
import { OneCallSystem, decidingCall } from "../replay/agentless/one-call";
import { Refusal } from "../replay/preflight";
import { replayProgram } from "./replay-program";

/** The rungs, for the --help of every replaying command. */
export const RUNGS_HELP = [
  "Without an allowed program, the run's recorded requests are re-sent to your endpoint (--base-url URL, --api-key-env VAR, else OPENAI_/ANTHROPIC_BASE_URL and _API_KEY; never an address or key from the run):",
  "| rung | replays | when |",
  "| --- | --- | --- |",
  "| 3 | the program, tools from the recording | --system, a built-in, or --allow-program naming the run's program |",
  "| 2 | every agent's recorded requests, tools from the recording, no program | otherwise, when the full requests were recorded (gateway, preload, SDK adapters) |",
  "| 1 | the one recorded call that made the action, with and without the item; scored on that answer's tool uses | otherwise, when that call was recorded in full; test --decision SEQ; test-endpoint |",
].join("\n");

/** The flags of rung 2 (and of test-endpoint): where calls go and which key they carry. */
export const ENDPOINT_FLAGS = { "base-url": "string", "api-key-env": "string", "timeout-s": "number" } as const;

/** The endpoint options of a command's flags (the key read from the variable --api-key-env names). */
export function endpointOptions(p: Parsed): EndpointOptions {
  const keyVar = p.flags["api-key-env"] as string | undefined;
  if (keyVar !== undefined && !process.env[keyVar]) throw new UsageError(`--api-key-env: ${keyVar} is not set`);
  return {
    baseUrl: p.flags["base-url"] as string | undefined,
    apiKey: keyVar ? process.env[keyVar] : undefined,
    timeoutMs: intFlag(p, "timeout-s", 120) * 1000,
  };
}

/** Did the user allow re-running the program (rung 3)? */
export function programAllowed(p: Parsed, m: RunModel): boolean {
  if (p.flags.system) return true;
  const program = m.start.program;
  if (program === undefined || program === null || program === "") return false;
  if (isBuiltin(program)) return true;
  return ((p.flags["allow-program"] as string[] | undefined) ?? []).includes(String(program));
}

/**
 * The System a replay of `runDir` runs: the program when allowed (rung 3), else the agentless
 * replay (rung 2), else, when the command names its target(s), the one recorded call that made the
 * action (rung 1). Says on stderr which, and why.
 */
export async function replaySystem(p: Parsed, runDir: string, targets?: string | readonly string[]): Promise<System> {
  const run = readRun(runDir);
  const m = new RunModel(run);
  if (programAllowed(p, m)) return replayProgram(p, runDir);
  const program = m.start.program ? String(m.start.program) : "";
  const orProgram = program ? `; or pass --allow-program ${singleQuote(program)} (or --system MODULE:EXPORT) to re-run the program` : "";
  let sys: AgentlessSystem;
  try {
    sys = new AgentlessSystem(run, endpointOptions(p));
  } catch (err) {
    if (err instanceof EndpointError) throw new UsageError(`replaying without the program: ${err.message}${orProgram}`);
    if (!(err instanceof Error) || err.name !== "ReplayError") throw err;
    const rung2 = err.message.replace(/^can't replay without the program: /, "");
    const list = targets === undefined ? [] : typeof targets === "string" ? [targets] : [...targets];
    // rung 1: the one call that made the action, when the command names it
    const one = list.length ? oneCallSystem(p, run, list, rung2, orProgram) : undefined;
    if (one instanceof OneCallSystem) {
      const d = one.decision;
      process.stderr.write(
        forTerminal(
          `causeway: replaying one recorded call (rung 1: call #${d.seq} of ${d.agent}, which made the action, re-sent with and without each suspect; nothing after it is re-simulated): the whole run can't be replayed without the program: ${rung2}`,
        ) + "\n",
      );
      return one;
    }
    // no rung 2 nor 1: the program's own refusal says what to pass, with why the recording is not enough
    const why = `${rung2}${one ? `; ${one}` : ""}`;
    try {
      return await replayProgram(p, runDir);
    } catch (e) {
      if (e instanceof UsageError) throw new UsageError(`${e.message}; replaying without the program is not possible either: ${why}`);
      throw e;
    }
  }
  const why = program ? `the run's program is not allowed (pass --allow-program ${singleQuote(program)} to re-run it)` : "the run names no program";
  process.stderr.write(`causeway: replaying without the program (rung 2: the recorded requests re-sent, tools from the tape): ${why}\n`);
  return sys;
}

/** The rung-1 System for the targets' one deciding call, or why there is none (a sentence). */
function oneCallSystem(p: Parsed, run: RunData, targets: string[], rung2: string, orProgram: string): OneCallSystem | string {
  let one: OneCallSystem;
  try {
    one = new OneCallSystem(run, targets[0], endpointOptions(p));
  } catch (err) {
    if (err instanceof EndpointError) throw new UsageError(`replaying one recorded call (rung 2 is not possible: ${rung2}): ${err.message}${orProgram}`);
    if (err instanceof Error && err.name === "ReplayError") return err.message;
    throw err;
  }
  const m = new RunModel(run);
  const others = targets.slice(1).map((t) => {
    try {
      return { t, d: decidingCall(m, t).decision };
    } catch (err) {
      throw new Refusal(`at rung 1: ${err instanceof Error ? err.message : String(err)}`);
    }
  });
  const apart = others.filter((o) => o.d.id !== one.decision.id);
  if (apart.length) {
    throw new Refusal(
      `at rung 1 one recorded call is re-sent, and these targets were made by different calls (${[`#${one.decision.seq} for ${JSON.stringify(targets[0])}`, ...apart.map((o) => `#${o.d.seq} for ${JSON.stringify(o.t)}`)].join(", ")}): give one target at a time (rung 2 is not possible: ${rung2})`,
    );
  }
  return one;
}

/**
 * `test --decision SEQ` without an allowed program (rung 1): the call must exist, have its request
 * recorded, rely on no provider state, and have an endpoint named; refused (exit 2) before anything
 * is sent. Says on stderr which call is re-sent.
 */
export function checkDecisionCall(p: Parsed, m: RunModel, decision: string): void {
  try {
    const r = rebuildRequest(m, /^\d+$/.test(decision) ? Number(decision) : decision);
    const why = r.codec.notReplayable(r.body, m.value(r.decision.output));
    if (why) throw new EndpointError(`call #${r.decision.seq} can't be re-sent: ${why}`);
    checkDefaultEndpoint(r.codec, r.record.url, endpointOptions(p).baseUrl);
    process.stderr.write(
      forTerminal(
        `causeway: re-sending recorded call #${r.decision.seq} of ${r.decision.agent} (rung 1: with and without the item; nothing after it is re-simulated)`,
      ) + "\n",
    );
  } catch (err) {
    if (err instanceof EndpointError) throw new UsageError(err.message);
    throw err;
  }
}

/**
 * Rung 1 answers only for what is in the one re-sent call: refuses (exit 2, before anything is
 * sent) a removal or fix none of whose blocks is in that call's request.
 */
export function checkRungScope(sys: unknown, specs: readonly string[]): void {
  if (!(sys instanceof OneCallSystem)) return;
  for (const s of specs) {
    const why = sys.untestable(s);
    if (why)
      throw new Refusal(
        `${s} can't be tested at rung 1: it is ${why}; nothing was sent. Replaying more needs the program (--allow-program) or a recording rung 2 can replay`,
      );
  }
}

/**
 * The suspects `matrix` tests: every input and channel of the run, less (on stderr, with why) what
 * the replay can't test (rung 1: not in the one re-sent call).
 */
export function testableSpecs(sys: unknown, m: RunModel): string[] {
  const specs: string[] = [];
  for (const e of m.events) {
    const s = e.type === "message" ? `msg:${e.agent}->${e.to}` : e.type === "input" && e.kind !== "task" ? `input:${e.source}` : null;
    if (s && !specs.includes(s)) specs.push(s);
  }
  if (!(sys instanceof OneCallSystem)) return specs;
  const out = specs.filter((s) => !sys.untestable(s));
  for (const s of specs.filter((x) => !out.includes(x))) process.stderr.write(forTerminal(`causeway: not tested at rung 1: ${s}: ${sys.untestable(s)}`) + "\n");
  if (!out.length) throw new Refusal("nothing to test at rung 1: no input or channel of the run is in the request of the one call re-sent; nothing was sent");
  return out;
}

/** The recorded calls one replay by `sys` re-sends: all of them, or at rung 1 the one call (for the cost estimate). */
export function replayedCalls(sys: unknown, m: RunModel): RunModel["decisions"] {
  return sys instanceof OneCallSystem ? m.decisions.filter((d) => d.id === sys.decision.id) : m.decisions;
}

/** Is this System the agentless replay? */
export function isAgentless(sys: unknown): sys is AgentlessSystem {
  return sys instanceof AgentlessSystem;
}
