/**
 * What the tests of unmodified programs share: the CLI run as a child process (so the fake model
 * server, which answers from the test's own process, is never blocked) and a run's events.
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import type { FakeLlm } from "../../fake-llm/server";

export const ROOT = path.resolve(import.meta.dirname, "../../..");
export const CLI = path.join(ROOT, "dist/cli.js");

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** `causeway ARGS` with the clients pointed at the fake server (`env` on top), from `cwd`. */
export function runCli(llm: FakeLlm, args: string[], env: Record<string, string> = {}, cwd = ROOT): Promise<CliResult> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      cwd,
      env: {
        ...process.env,
        OPENAI_BASE_URL: llm.openaiBaseURL,
        OPENAI_API_KEY: "fake",
        ANTHROPIC_BASE_URL: llm.anthropicBaseURL,
        ANTHROPIC_API_KEY: "fake",
        ...env,
      },
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c) => (stdout += c));
    child.stderr.on("data", (c) => (stderr += c));
    child.on("close", (code) => resolve({ code: code ?? 1, stdout, stderr }));
  });
}

/** A run's events, parsed. */
export function events(dir: string): Record<string, any>[] {
  return fs
    .readFileSync(path.join(dir, "events.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l));
}
