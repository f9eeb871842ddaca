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
 */
import type { Progress } from "./engine";
import type { Approval } from "./approval";

export type WorkerRequest =
  | { op: "test"; run: string; program: string; root: string; approval?: Approval; intervention: string | string[]; target: string; n?: number; nMax?: number; liveTools?: boolean; workers?: number }
  | { op: "attribute"; run: string; program: string; root: string; approval?: Approval; target: string; suspects?: string[]; n?: number; nMax?: number; maxCalls?: number; workers?: number; roles?: boolean; spans?: boolean }
  | { op: "fixCheck"; run: string; program: string; root: string; approval?: Approval; fix: string[]; harm: string; keep?: string[]; n?: number; nMax?: number; workers?: number }
  | { op: "decision"; run: string; program: string; root: string; approval?: Approval; decision: number | string; intervention: string; contains?: string; n?: number }
  | { op: "replay"; run: string; program: string; root: string; approval?: Approval; remove?: string[]; seed?: number };

export type WorkerMessage =
  | ({ type: "progress" } & Progress)
  | { type: "result"; op: WorkerRequest["op"]; result: unknown }
  | { type: "error"; message: string; kind: "program" | "replay" | "spec" | "not-allowed" | "internal" };
