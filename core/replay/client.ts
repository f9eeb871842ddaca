/**
 * Runs a replay in the worker process: spawn, send the request, stream progress, resolve with the
 * result. Cancelling (an AbortSignal) or a timeout kills the worker; a crash, a non-zero exit
 * without a result or unparseable output rejects with a WorkerFailure. Never runs the program in
 * this process.
 */
import { spawn } from "node:child_process";
import type { Progress } from "./context";
import type { WorkerMessage, WorkerRequest } from "./worker-protocol";

export class WorkerFailure extends Error {
  constructor(
    message: string,
    readonly kind: "cancelled" | "timeout" | "crashed" | "program" | "replay" | "spec" | "not-allowed" | "internal",
    readonly stderr = "",
  ) {
    super(message);
    this.name = "WorkerFailure";
  }
}

export interface WorkerOptions {
  /** Path of dist/worker.js. */
  workerPath: string;
  /** The Node executable (in VS Code: process.execPath, run as Node). */
  execPath?: string;
  cwd?: string;
  timeoutMs?: number;
  signal?: AbortSignal;
  onProgress?: (p: Progress) => void;
  env?: NodeJS.ProcessEnv;
}

export function runInWorker(req: WorkerRequest, opts: WorkerOptions): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const child = spawn(opts.execPath ?? process.execPath, [opts.workerPath], {
      cwd: opts.cwd,
      env: { ...process.env, ...opts.env, ELECTRON_RUN_AS_NODE: "1" },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let settled = false;
    let stdout = "";
    let stderr = "";
    let result: WorkerMessage | undefined;
    const finish = (err: WorkerFailure | null, value?: unknown) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      opts.signal?.removeEventListener("abort", onAbort);
      if (child.exitCode === null && !child.killed) child.kill("SIGKILL");
      if (err) reject(err);
      else resolve(value);
    };
    const timer = setTimeout(
      () => finish(new WorkerFailure(`the replay did not finish within ${Math.round((opts.timeoutMs ?? 0) / 1000)} s and was stopped`, "timeout", stderr)),
      opts.timeoutMs ?? 2 ** 31 - 1,
    );
    const onAbort = () => finish(new WorkerFailure("cancelled", "cancelled", stderr));
    if (opts.signal?.aborted) return onAbort();
    opts.signal?.addEventListener("abort", onAbort);
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk: string) => {
      stdout += chunk;
      let nl: number;
      while ((nl = stdout.indexOf("\n")) >= 0) {
        const line = stdout.slice(0, nl);
        stdout = stdout.slice(nl + 1);
        if (!line.trim()) continue;
        let msg: WorkerMessage;
        try {
          msg = JSON.parse(line);
        } catch {
          continue; // not ours
        }
        if (msg.type === "progress") opts.onProgress?.(msg);
        else result = msg;
      }
    });
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (c: string) => {
      stderr = (stderr + c).slice(-20000);
    });
    child.on("error", (err) => finish(new WorkerFailure(`could not start the replay worker: ${err.message}`, "crashed", stderr)));
    child.on("close", (code, sig) => {
      if (result?.type === "result") return finish(null, result.result);
      if (result?.type === "error") return finish(new WorkerFailure(result.message, result.kind, stderr));
      finish(
        new WorkerFailure(
          `the replay worker exited (${sig ?? `code ${code}`}) without a result${stderr ? `: ${stderr.trim().split("\n").slice(-3).join(" | ")}` : ""}`,
          "crashed",
          stderr,
        ),
      );
    });
    child.stdin.end(JSON.stringify(req) + "\n");
  });
}
