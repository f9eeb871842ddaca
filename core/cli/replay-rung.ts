/**
 * Which rung a replaying command (test, attribute, matrix, fix-check, case --investigate) climbs:
 *
 *   rung 3  the program re-runs          when the program is allowed (--system, a built-in, or
 *                                         --allow-program naming the run's program)
 *   rung 2  agentless re-simulation       else, when every model call's full request was recorded
 *           from the recorded requests    (the gateway, the preload, the SDK adapters)
 *   rung 1  one recorded call re-sent      `test --decision SEQ` on such a run (test-endpoint)
 *
 * Rung 2 sends model calls to the endpoint the caller names (--base-url, else OPENAI_BASE_URL /
 * ANTHROPIC_BASE_URL) with the caller's key (--api-key-env VAR, else OPENAI_API_KEY /
 * ANTHROPIC_API_KEY), never to an address or with a key the run names: a run file is
 * attacker-controlled. No tool runs and no program starts, so no allow-list is needed.
 */
import { UsageError, intFlag, type Parsed } from "./args";
import { singleQuote } from "../argv";
import { readRun } from "../log/reader";
import { RunModel } from "../graph/model";
import { isBuiltin } from "../replay/programs";
import { EndpointError } from "../adapters/endpoint-replay";
import { AgentlessSystem } from "../replay/agentless/system";
import type { EndpointOptions } from "../replay/agentless/wire";
import type { System } from "../sdk/system";
import { replayProgram } from "./replay-program";

/** The rungs, for the --help of every replaying command. */
export const RUNGS_HELP = [
  "Without an allowed program, the run's recorded requests are re-sent to your endpoint (--base-url URL, --api-key-env VAR, else OPENAI_/ANTHROPIC_BASE_URL and _API_KEY; never an address or key from the run):",
  "| rung | replays | when |",
  "| --- | --- | --- |",
  "| 3 | the program, tools from the recording | --system, a built-in, or --allow-program naming the run's program |",
  "| 2 | every agent's recorded requests, tools from the recording, no program | otherwise, when the full requests were recorded (gateway, preload, SDK adapters) |",
  "| 1 | one recorded call, with and without the item | test --decision SEQ on such a run; test-endpoint |",
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
 * replay (rung 2). Says on stderr which, and why.
 */
export async function replaySystem(p: Parsed, runDir: string): Promise<System> {
  const run = readRun(runDir);
  const m = new RunModel(run);
  if (programAllowed(p, m)) return replayProgram(p, runDir);
  let sys: AgentlessSystem;
  try {
    sys = new AgentlessSystem(run, endpointOptions(p));
  } catch (err) {
    if (err instanceof EndpointError) {
      const program = m.start.program ? String(m.start.program) : "";
      throw new UsageError(`replaying without the program: ${err.message}${program ? `; or pass --allow-program ${singleQuote(program)} (or --system MODULE:EXPORT) to re-run the program` : ""}`);
    }
    if (!(err instanceof Error) || err.name !== "ReplayError") throw err;
    // no rung 2: the program's own refusal says what to pass, with why the recording is not enough
    try {
      return await replayProgram(p, runDir);
    } catch (e) {
      if (e instanceof UsageError) throw new UsageError(`${e.message}; replaying without the program is not possible either: ${err.message.replace(/^can't replay without the program: /, "")}`);
      throw e;
    }
  }
  const program = m.start.program;
  const why = program ? `the run's program is not allowed (pass --allow-program ${singleQuote(String(program))} to re-run it)` : "the run names no program";
  process.stderr.write(`causeway: replaying without the program (rung 2: the recorded requests re-sent, tools from the tape): ${why}\n`);
  return sys;
}

/** Is this System the agentless replay? */
export function isAgentless(sys: unknown): sys is AgentlessSystem {
  return sys instanceof AgentlessSystem;
}
