/** Shared by the extension's unit tests: scratch folders, the demo's runs, the reference's runs. */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { runDemo } from "../../../core/cli/demo";

export const ROOT = path.resolve(__dirname, "../../..");
export const REFERENCE_RUNS = path.join(ROOT, "test/fixtures/causeway-py-demo");

export function tmpDir(prefix = "cw-ext-"): string {
  return fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
}

let demo: Promise<string> | undefined;
/** The demo's 8 runs (with their tests), recorded once per test file into <ws>/runs. Returns <ws>. */
export function demoWorkspace(): Promise<string> {
  demo ??= (async () => {
    const ws = tmpDir("cw-ext-demo-");
    await runDemo({ out: path.join(ws, "runs"), n: 20, quiet: true });
    return ws;
  })();
  return demo;
}

/** A copy of a folder. */
export function copyDir(from: string, to: string): string {
  fs.cpSync(from, to, { recursive: true });
  return to;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Waits until `cond` holds (polling), or fails after `ms`. */
export async function until(cond: () => boolean, ms = 5000, what = "condition"): Promise<void> {
  const t0 = Date.now();
  while (!cond()) {
    if (Date.now() - t0 > ms) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}
