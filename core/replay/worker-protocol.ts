/**
 * The out-of-process replay worker's protocol. The parent writes one JSON request line to the
 * worker's stdin; the worker writes JSON lines to stdout: any number of `progress`, then exactly one
 * `result` or `error`. A test's result is appended to tests.jsonl by the worker only once the whole
 * test (or attribution) has finished, so a worker that is killed, times out or crashes leaves
 * nothing half-done behind.
 *
 * `program` is the run's `run.start.program`; `root` the folder it resolves against (the workspace
 * folder); `approval` the user's stored approval of that program (its file and sha256), which the
 * worker checks against what it would run. A built-in program needs none.
 *
 * `agentless` asks for the replay without the program (rung 2): the run's recorded requests are
 * re-sent to the endpoint it names (else the worker's OPENAI_/ANTHROPIC_BASE_URL), with its key
 * (else OPENAI_/ANTHROPIC_API_KEY), tools served from the tape; when the whole run can't be
 * re-simulated, the one recorded call that made the target action (rung 1). No program runs, so
 * no approval is checked; the endpoint and key come from the user, never from the run.
 */
import type { Progress } from "./context";
import type { Approval } from "./approval";

/** Where an agentless replay sends its calls, and the key they carry (the user's, never the run's). */
export interface AgentlessEndpoint {
  baseUrl?: string;
  apiKey?: string;
}

export type WorkerRequest =
  | {
      op: "test";
      run: string;
      program: string;
      root: string;
      approval?: Approval;
      agentless?: AgentlessEndpoint;
      intervention: string | string[];
      target: string;
      n?: number;
      nMax?: number;
      liveTools?: boolean;
      workers?: number;
    }
  | {
      op: "attribute";
      run: string;
      program: string;
      root: string;
      approval?: Approval;
      agentless?: AgentlessEndpoint;
      target: string;
      suspects?: string[];
      n?: number;
      nMax?: number;
      maxCalls?: number;
      workers?: number;
      roles?: boolean;
      spans?: boolean;
    }
  | {
      op: "fixCheck";
      run: string;
      program: string;
      root: string;
      approval?: Approval;
      agentless?: AgentlessEndpoint;
      fix: string[];
      harm: string;
      keep?: string[];
      n?: number;
      nMax?: number;
      workers?: number;
    }
  | {
      op: "decision";
      run: string;
      program: string;
      root: string;
      approval?: Approval;
      agentless?: AgentlessEndpoint;
      decision: number | string;
      intervention: string;
      contains?: string;
      n?: number;
    }
  | { op: "replay"; run: string; program: string; root: string; approval?: Approval; agentless?: AgentlessEndpoint; remove?: string[]; seed?: number };

export type WorkerMessage =
  | ({ type: "progress" } & Progress)
  | { type: "result"; op: WorkerRequest["op"]; result: unknown }
  | { type: "error"; message: string; kind: "program" | "replay" | "spec" | "not-allowed" | "internal" };
