/**
 * `causeway record -- COMMAND` for a program that is not Node: the program runs behind a built-in
 * gateway (core/capture/gateway.ts) for its lifetime. Its `OPENAI_BASE_URL` and
 * `ANTHROPIC_BASE_URL` point at the gateway (`…/v1` for OpenAI clients, the bare address for
 * Anthropic's, as the official clients in every language expect); the gateway forwards to what
 * those variables said in this environment (else the public APIs), or to `--upstream URL`.
 *
 * How the program is run: a Node program is recognised by its command (`node`, a .js/.mjs/.cjs
 * file, npx/npm/pnpm/yarn/tsx, or a file whose `#!` line names node) and recorded under the
 * preload, which sees its tools as well; anything else (python3, a shell script, a binary) runs
 * behind the gateway. `--via preload|gateway` chooses explicitly.
 *
 * The built-in gateway records one run whatever a request says (no `x-causeway-run`, no gap), and
 * takes requests only under a random path that only the child's base URLs carry, so another local
 * program can't add calls to the run.
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { UsageError } from "./args";
import { startGateway } from "../capture/gateway";

export type Via = "preload" | "gateway";

/** Commands that run Node programs (the preload reaches them through NODE_OPTIONS). */
const NODE_RUNNERS = new Set(["node", "nodejs", "npx", "npm", "pnpm", "yarn", "tsx", "ts-node", "corepack"]);

/** The first words of `env [-i] [NAME=VALUE]… COMMAND`: the command itself. */
function afterEnv(command: readonly string[]): readonly string[] {
  if (path.basename(command[0] ?? "") !== "env") return command;
  let i = 1;
  while (i < command.length && (command[i].startsWith("-") || /^[A-Za-z_][A-Za-z0-9_]*=/.test(command[i]))) i++;
  return command.slice(i);
}

/** Does the file's `#!` line run node? (false when it is not a readable file) */
function nodeShebang(file: string): boolean {
  try {
    const fd = fs.openSync(file, "r");
    try {
      const buf = Buffer.alloc(256);
      const n = fs.readSync(fd, buf, 0, buf.length, 0);
      const first = buf.subarray(0, n).toString("utf8").split("\n")[0];
      return /^#!.*\bnode(js)?\b/.test(first);
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    return false;
  }
}

/** How `causeway record` runs a command: the preload for Node programs, else the built-in gateway. */
export function chooseVia(command: readonly string[], cwd: string, forced?: string): Via {
  if (forced !== undefined) {
    if (forced !== "preload" && forced !== "gateway") throw new UsageError(`record: --via takes preload or gateway, got ${JSON.stringify(forced)}`);
    return forced;
  }
  const cmd = afterEnv(command);
  const first = cmd[0] ?? "";
  const name = path
    .basename(first)
    .toLowerCase()
    .replace(/\.(exe|cmd)$/, "");
  if (NODE_RUNNERS.has(name) || /\.(m?js|cjs)$/.test(first)) return "preload";
  if (first.includes("/") || first.includes("\\") || fs.existsSync(path.resolve(cwd, first))) {
    if (nodeShebang(path.resolve(cwd, first))) return "preload";
  }
  return "gateway";
}

/** A base URL from the environment or a flag: an http(s) URL, else a usage error naming where it came from. */
function httpUrl(value: string, from: string): string {
  let u: URL;
  try {
    u = new URL(value);
  } catch {
    throw new UsageError(`record: ${from} is not a URL: ${JSON.stringify(value.slice(0, 200))}`);
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") throw new UsageError(`record: ${from} must be an http(s) URL`);
  if (u.username || u.password) throw new UsageError(`record: ${from} must not carry credentials in the URL (keep keys in OPENAI_API_KEY / ANTHROPIC_API_KEY)`);
  return value;
}

/** Where the built-in gateway forwards: --upstream for both APIs, else each API's base URL in this environment, else its public endpoint. */
export function upstreamsFor(env: NodeJS.ProcessEnv, upstream?: string): { openai: string; anthropic: string } {
  if (upstream !== undefined) {
    const u = httpUrl(upstream, "--upstream");
    return { openai: u, anthropic: u };
  }
  const openai = env.OPENAI_BASE_URL || env.OPENAI_API_BASE;
  return {
    openai: openai ? httpUrl(openai, env.OPENAI_BASE_URL ? "OPENAI_BASE_URL" : "OPENAI_API_BASE") : "https://api.openai.com/v1",
    anthropic: env.ANTHROPIC_BASE_URL ? httpUrl(env.ANTHROPIC_BASE_URL, "ANTHROPIC_BASE_URL") : "https://api.anthropic.com",
  };
}

/** The child's environment: this one with the clients' base URLs pointed at the gateway. */
export function gatewayEnv(env: NodeJS.ProcessEnv, base: string): NodeJS.ProcessEnv {
  const e: NodeJS.ProcessEnv = { ...env, OPENAI_BASE_URL: `${base}/v1`, ANTHROPIC_BASE_URL: base };
  if (env.OPENAI_API_BASE !== undefined) e.OPENAI_API_BASE = `${base}/v1`;
  delete e.CAUSEWAY_CONFIG;
  return e;
}

export interface GatewayRecording {
  command: readonly string[];
  root: string;
  outRoot: string;
  runId: string;
  /** The recorded command line and argv (secrets redacted). */
  program: string;
  recorded: readonly string[];
  seed?: number;
  sensitive: readonly string[];
  untrusted: readonly string[];
  trusted: readonly string[];
  upstream?: string;
  /** The child's stdout is dropped (--json prints one object). */
  quiet: boolean;
}

/** Runs the command behind a built-in gateway; the exit code, and whether a run was written. */
export async function recordBehindGateway(r: GatewayRecording): Promise<{ code: number; recorded: boolean }> {
  const up = upstreamsFor(process.env, r.upstream);
  const prefix = `/s-${randomBytes(12).toString("hex")}`;
  const gw = await startGateway({
    upstream: up.openai,
    anthropicUpstream: up.anthropic,
    outDir: r.outRoot,
    port: 0,
    runId: r.runId,
    singleRun: true,
    pathPrefix: prefix,
    program: r.program,
    root: r.root,
    seed: r.seed,
    meta: { command: [...r.recorded], via: "gateway" },
    sensitiveTools: r.sensitive,
    untrustedTools: r.untrusted,
    trustedTools: r.trusted,
  });
  // the run is written here: Ctrl-C (which the terminal sends the program too) and SIGTERM end the
  // program, not the recording, which is closed with run.end once the program has exited
  const onInt = () => {};
  let child: ReturnType<typeof spawn> | undefined;
  const onTerm = () => child?.kill("SIGTERM");
  process.on("SIGINT", onInt);
  process.on("SIGTERM", onTerm);
  let code = 1;
  try {
    code = await new Promise<number>((resolve) => {
      child = spawn(r.command[0], r.command.slice(1), {
        cwd: r.root,
        env: gatewayEnv(process.env, gw.url + prefix),
        stdio: ["inherit", r.quiet ? "ignore" : "inherit", "inherit"],
      });
      child.on("error", (err) => {
        process.stderr.write(`causeway record: could not start ${r.command[0]}: ${err.message}\n`);
        resolve(127);
      });
      child.on("close", (c, sig) => resolve(c ?? (sig ? 128 : 1)));
    });
  } finally {
    process.off("SIGINT", onInt);
    process.off("SIGTERM", onTerm);
    await gw.close({ exit_code: code });
  }
  return { code, recorded: gw.runs().length > 0 };
}
