/**
 * The worker's replay without the program: rung 2 (every agent's recorded requests re-sent, tools
 * from the tape), else, as the CLI does (cli/replay-rung.ts), rung 1: the one recorded call that
 * made the target action, re-sent with and without each suspect. Rung 1 needs a target (a test, a
 * Find the cause, a fix check's harm) and refuses, before anything is sent, a suspect or fix none
 * of whose blocks is in that call's request. The endpoint and key are the request's (the user's),
 * else the worker's environment; never the run's.
 */
import type { RunData } from "../log/reader";
import type { System } from "../sdk/system";
import { AgentlessSystem } from "./agentless/system";
import { OneCallSystem } from "./agentless/one-call";
import { ReplayError } from "./context";
import type { WorkerRequest } from "./worker-protocol";

/** The endpoint options of a request (blank values: the environment's). */
export function endpointOf(req: WorkerRequest): { baseUrl?: string; apiKey?: string } {
  const { baseUrl, apiKey } = req.agentless ?? {};
  return {
    baseUrl: typeof baseUrl === "string" && baseUrl ? baseUrl : undefined,
    apiKey: typeof apiKey === "string" && apiKey ? apiKey : undefined,
  };
}

const isReplayError = (err: unknown): err is Error => err instanceof Error && err.name === "ReplayError";

/** The target a rung-1 replay scores, and the suspects or fixes it must hold. */
function scopeOf(req: WorkerRequest): { target?: string; specs: string[] } {
  switch (req.op) {
    case "test":
      return { target: req.target, specs: Array.isArray(req.intervention) ? req.intervention : [req.intervention] };
    case "attribute":
      return { target: req.target, specs: [] }; // Find the cause lists the suspects it can't test (not_tested)
    case "fixCheck":
      return { target: req.harm, specs: req.fix };
    default:
      return { specs: [] };
  }
}

/** Rung 2, else rung 1 for the request's target; a ReplayError (nothing sent) when neither can answer. */
export function agentlessSystem(req: WorkerRequest, run: RunData): System {
  if (req.op === "test" && req.liveTools) throw new ReplayError("live tools need the program: a replay without it serves every tool from the recording");
  const opts = endpointOf(req);
  try {
    return new AgentlessSystem(run, opts);
  } catch (err) {
    if (!isReplayError(err)) throw err;
    const rung2 = err.message.replace(/^can't replay without the program: /, "");
    const { target, specs } = scopeOf(req);
    if (target === undefined) throw err;
    let one: OneCallSystem;
    try {
      one = new OneCallSystem(run, target, opts);
    } catch (e) {
      if (isReplayError(e)) throw new ReplayError(`can't replay without the program: ${rung2}; ${e.message}`);
      throw e;
    }
    for (const s of specs) {
      const why = one.untestable(s);
      if (why)
        throw new ReplayError(
          `${s} can't be tested at rung 1: it is ${why}; nothing was sent. The whole run can't be re-simulated without the program: ${rung2}`,
        );
    }
    return one;
  }
}
