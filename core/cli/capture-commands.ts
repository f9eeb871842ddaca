/**
 * The capture commands of the CLI: ways in for real agents (docs/capture.md).
 *
 *   causeway gateway --upstream URL --out DIR [--port P]      record any agent by changing one base URL
 *   causeway serve ROOT [--token-env VAR | --token-file FILE] collect runs shipped by HttpSink
 *   causeway watch ROOT [--webhook URL]                       print new alerts as runs are written
 *   causeway import otel FILE [--out DIR]                     OpenTelemetry GenAI traces → runs
 *   causeway test-endpoint RUN --decision SEQ --remove SPEC   decision replay against the model's endpoint
 */
import fs from "node:fs";
import path from "node:path";
import { randomBytes } from "node:crypto";
import { intFlag, UsageError, type Parsed } from "./args";
import type { Command } from "./command";
import { err as errLine, json, jsonLine, out, formatTest } from "./output";
import { PAIRS_HELP, pairsOf } from "./pairs";
import { readRun } from "../log/reader";
import { parseIntervention, parseTarget } from "../specs/grammar";
import { startGateway } from "../capture/gateway";
import { COLLECTOR_DEFAULTS, exposed, MAX_BODY_BYTES, startCollector } from "../capture/server";
import { GATEWAY_DEFAULTS } from "../capture/gateway";
import { DEFAULT_RUN_GAP_MS } from "../capture/gateway-runs";
import { parseScopes } from "../store/tokens";
import { AlertWatcher, alertLine } from "../capture/watch";
import { importOtel } from "../importers/otel";
import { EndpointError, rebuildRequest, withoutBlocks, type RebuiltRequest } from "../replay/endpoint-replay";
import { endpointDecisionTest } from "../replay/endpoint-test";
import { RunModel } from "../graph/model";
import { Refusal } from "../replay/preflight";
import { RUNGS_HELP } from "./replay-rung";
import { alertRecord } from "../analysis/alerts";
import { TOKEN_FLAGS, TOKEN_USAGE, tokenFrom } from "./token";

/** Resolves on SIGINT / SIGTERM after `stop` has run. */
function untilSignal(stop: () => Promise<void> | void): Promise<number> {
  return new Promise((resolve) => {
    const done = () => {
      process.off("SIGINT", done);
      process.off("SIGTERM", done);
      Promise.resolve()
        .then(stop)
        .then(
          () => resolve(0),
          (err: unknown) => {
            process.stderr.write(`causeway: stopping failed: ${(err as Error)?.message ?? String(err)}\n`);
            resolve(1);
          },
        );
    };
    process.on("SIGINT", done);
    process.on("SIGTERM", done);
  });
}

const list = (p: Parsed, name: string) => (p.flags[name] as string[] | undefined) ?? [];

/** NAME=ENVVAR pairs → label → key, read from the environment (keys never go on a command line). */
function agentKeys(p: Parsed): Record<string, string> {
  const keys: Record<string, string> = {};
  for (const pair of list(p, "agent-key")) {
    const m = /^([^=]+)=([A-Za-z_][A-Za-z0-9_]*)$/.exec(pair);
    if (!m) throw new UsageError(`--agent-key takes NAME=ENVVAR (the key itself stays in the environment), got ${JSON.stringify(pair)}`);
    const key = process.env[m[2]];
    if (!key) throw new UsageError(`--agent-key ${m[1]}: the environment variable ${m[2]} is not set`);
    keys[m[1]] = key;
  }
  return keys;
}

/** A duration flag in seconds (fractions allowed) → milliseconds, between 1 ms and an hour. */
function secondsFlag(p: Parsed, name: string, dfltMs: number): number {
  const v = p.flags[name];
  if (v === undefined) return dfltMs;
  if (typeof v !== "number" || !(v >= 0.001 && v <= 3600)) throw new UsageError(`--${name} must be a number of seconds from 0.001 to 3600`);
  return Math.round(v * 1000);
}

/** --max-body-mb: a whole number of MB ≥ 1; above the largest the collector takes it is lowered to that, with a notice. */
function maxBodyBytes(p: Parsed): number {
  const v = p.flags["max-body-mb"];
  if (v === undefined) return COLLECTOR_DEFAULTS.maxBodyBytes;
  if (typeof v !== "number" || !Number.isInteger(v) || v < 1) throw new UsageError("--max-body-mb must be a whole number of MB ≥ 1");
  const maxMb = MAX_BODY_BYTES / (1 << 20);
  if (v > maxMb) {
    process.stderr.write(`causeway serve: --max-body-mb ${v} is above the largest body the collector holds in memory (${maxMb} MB); using ${maxMb}\n`);
    return MAX_BODY_BYTES;
  }
  return v * (1 << 20);
}

/** --max-body-pool-mb: the memory all bodies being received at once may hold (default 4 × the body limit). */
function maxBodyPool(p: Parsed): number | undefined {
  if (p.flags["max-body-pool-mb"] === undefined) return undefined;
  const n = intFlag(p, "max-body-pool-mb", 1);
  if (n > 65536) throw new UsageError("--max-body-pool-mb must be at most 65536");
  return n * (1 << 20);
}

function maxConnections(p: Parsed): number {
  const n = intFlag(p, "max-connections", COLLECTOR_DEFAULTS.maxConnections);
  if (n > 65536) throw new UsageError("--max-connections must be at most 65536");
  return n;
}

export const CAPTURE_COMMANDS: Record<string, Command> = {
  gateway: {
    usage:
      "causeway gateway --upstream URL --out DIR [--port P] [--host H] [--run-id ID] [--run-gap-s S] [--sensitive TOOL]... [--trusted-tool TOOL]... [--untrusted-tool TOOL]... [--agent-key NAME=ENVVAR]... [--connect-timeout-s S] [--idle-timeout-s S] [--allow-origin ORIGIN]... [--json]",
    help: "a local OpenAI/Anthropic-compatible proxy that records every call as a decision; a new run per x-causeway-run value or after --run-gap-s quiet seconds (default 120, 0: never); tool results untrusted unless --trusted-tool",
    spec: {
      positionals: [],
      flags: {
        upstream: "string",
        out: "string",
        port: "number",
        host: "string",
        "run-id": "string",
        "run-gap-s": "number",
        sensitive: "strings",
        "untrusted-tool": "strings",
        "trusted-tool": "strings",
        "agent-key": "strings",
        "connect-timeout-s": "number",
        "idle-timeout-s": "number",
        "allow-origin": "strings",
        json: "boolean",
      },
    },
    run: async (p) => {
      const allowOrigins = list(p, "allow-origin");
      for (const o of allowOrigins) {
        let ok = false;
        try {
          ok = new URL(o).origin === o;
        } catch {
          ok = false;
        }
        if (!ok)
          throw new UsageError(
            `gateway: --allow-origin takes an origin such as http://localhost:5173 (scheme, host and port, no path), got ${JSON.stringify(o)}`,
          );
      }
      const upstream = p.flags.upstream as string | undefined;
      if (!upstream) throw new UsageError("gateway: --upstream URL is required (e.g. https://api.openai.com or https://api.anthropic.com)");
      if (!/^https?:\/\//i.test(upstream)) throw new UsageError("gateway: --upstream must be an http(s) URL");
      const outDir = path.resolve((p.flags.out as string | undefined) ?? "runs");
      const trustedTools = list(p, "trusted-tool");
      const both = trustedTools.filter((t) => list(p, "untrusted-tool").includes(t));
      if (both.length) throw new UsageError(`gateway: a tool can't be both --trusted-tool and --untrusted-tool: ${both.join(", ")}`);
      const gap = p.flags["run-gap-s"];
      if (gap !== undefined && (typeof gap !== "number" || !(gap === 0 || (gap >= 0.001 && gap <= 86_400))))
        throw new UsageError("--run-gap-s must be 0 (never split) or a number of seconds up to 86400");
      const gw = await startGateway({
        upstream,
        outDir,
        port: p.flags.port === undefined ? 7789 : intFlag(p, "port", 7789, 0),
        host: p.flags.host as string | undefined,
        runId: p.flags["run-id"] as string | undefined,
        sensitiveTools: list(p, "sensitive"),
        untrustedTools: list(p, "untrusted-tool"),
        trustedTools,
        runGapMs: gap === undefined ? DEFAULT_RUN_GAP_MS : Math.round(gap * 1000),
        agentKeys: agentKeys(p),
        connectTimeoutMs: secondsFlag(p, "connect-timeout-s", GATEWAY_DEFAULTS.connectTimeoutMs),
        idleTimeoutMs: secondsFlag(p, "idle-timeout-s", GATEWAY_DEFAULTS.idleTimeoutMs),
        allowOrigins,
        log: p.flags.json ? (l) => jsonLine({ event: "log", message: l }) : (l) => out(`  ${l}`),
      });
      // the handlers are in place before the first line, so a signal sent on reading it is handled
      const done = untilSignal(async () => {
        await gw.close();
        if (p.flags.json) jsonLine({ event: "closed", runs: gw.runs() });
        else out(`runs: ${gw.runs().join(", ") || "none"}`);
      });
      if (p.flags.json) jsonLine({ event: "listening", url: gw.url, upstream, out: outDir, openai_base_url: `${gw.url}/v1`, anthropic_base_url: gw.url });
      else {
        out(`causeway gateway on ${gw.url} -> ${upstream}, recording to ${outDir}`);
        out(`  OpenAI clients:    OPENAI_BASE_URL=${gw.url}/v1`);
        out(`  Anthropic clients: ANTHROPIC_BASE_URL=${gw.url}`);
        out("  name agents with the x-causeway-agent header (or --agent-key); Ctrl-C ends the runs");
        out(
          `  a new run on a new x-causeway-run value${gap === 0 ? "" : ` or after ${gap ?? DEFAULT_RUN_GAP_MS / 1000} s with no call`}; tool results untrusted unless --trusted-tool`,
        );
      }
      return done;
    },
  },
  serve: {
    usage: `causeway serve (ROOT | --store postgresql://…) ${TOKEN_USAGE} [--token-for SCOPES=ENVVAR]... [--host H] [--port P] [--max-body-mb N] [--header-timeout-s S] [--body-timeout-s S] [--max-connections N] [--max-body-pool-mb N] [--quiet] [--json]`,
    help: "collect runs shipped by HttpSink (POST /v1/ingest) and serve them (GET /v1/runs…); token from --token-env, --token-file or $CAUSEWAY_TOKEN",
    spec: {
      positionals: ["root?"],
      flags: {
        ...TOKEN_FLAGS,
        "token-for": "strings",
        store: "string",
        host: "string",
        port: "number",
        "max-body-mb": "number",
        "header-timeout-s": "number",
        "body-timeout-s": "number",
        "max-connections": "number",
        "max-body-pool-mb": "number",
        quiet: "boolean",
        json: "boolean",
      },
    },
    run: async (p) => {
      const storeUrl = p.flags.store as string | undefined;
      if (!storeUrl && !p.pos.root) throw new UsageError("serve: give a runs folder (ROOT) or --store postgresql://…");
      if (storeUrl && p.pos.root) throw new UsageError("serve: give a runs folder or --store, not both");
      if (storeUrl && !/^postgres(ql)?:\/\//i.test(storeUrl)) throw new UsageError("serve: --store takes a postgresql:// URL");
      const scoped = list(p, "token-for").map((pair) => {
        const m = /^([a-z,+]+)=([A-Za-z_][A-Za-z0-9_]*)$/.exec(pair);
        if (!m) throw new UsageError(`--token-for takes SCOPES=ENVVAR (e.g. read=CAUSEWAY_READ_TOKEN), got ${JSON.stringify(pair)}`);
        const tok = process.env[m[2]];
        if (!tok) throw new UsageError(`--token-for ${m[1]}: the environment variable ${m[2]} is not set`);
        try {
          return { token: tok, scopes: parseScopes(m[1]) };
        } catch (err) {
          throw new UsageError((err as Error).message);
        }
      });
      let token = tokenFrom(p, "serve");
      const generated = !token;
      token ??= randomBytes(18).toString("base64url");
      const host = (p.flags.host as string | undefined) ?? "127.0.0.1";
      if (exposed(host))
        process.stderr.write(`causeway serve: warning: binding to ${host} exposes the collector beyond this machine; anyone with the token can write runs\n`);
      const log = p.flags.quiet ? undefined : p.flags.json ? (l: string) => jsonLine({ event: "log", message: l }) : (l: string) => out(`  ${l}`);
      const store = storeUrl ? new (await import("../store/postgres")).PgStore(storeUrl, log) : undefined;
      const c = await startCollector({
        root: p.pos.root,
        store,
        token,
        tokens: scoped,
        host,
        port: p.flags.port === undefined ? 7788 : intFlag(p, "port", 7788, 0),
        maxBodyBytes: maxBodyBytes(p),
        headerTimeoutMs: secondsFlag(p, "header-timeout-s", COLLECTOR_DEFAULTS.headerTimeoutMs),
        bodyTimeoutMs: secondsFlag(p, "body-timeout-s", COLLECTOR_DEFAULTS.bodyTimeoutMs),
        maxConnections: maxConnections(p),
        maxBodyPoolBytes: maxBodyPool(p),
        log,
        // on PostgreSQL the collector takes jobs for the team's workers (causeway worker)
        jobs: storeUrl ? await (await import("../jobs/api")).collectorJobs(storeUrl, log) : undefined,
      });
      const done = untilSignal(async () => {
        await c.close();
        if (p.flags.json) jsonLine({ event: "closed" });
      });
      const where = storeUrl ? "postgresql" : path.resolve(p.pos.root!);
      if (p.flags.json)
        jsonLine({
          event: "listening",
          url: c.url,
          ingest: `${c.url}/v1/ingest`,
          runs: `${c.url}/v1/runs`,
          store: storeUrl ? "postgresql" : "folder",
          root: storeUrl ? null : where,
          token: generated ? token : null,
        });
      else {
        out(`causeway collector on ${c.url}: POST /v1/ingest, GET /v1/runs -> ${where}`);
        if (generated) out(`  token (set CAUSEWAY_TOKEN to choose one): ${token}`);
      }
      return done;
    },
  },
  watch: {
    usage: "causeway watch ROOT [--webhook URL] [--interval MS] [--all] [--json]",
    help: "print new alerts as runs are written; --webhook posts each new high alert",
    spec: { positionals: ["root"], flags: { webhook: "string", interval: "number", all: "boolean", json: "boolean" } },
    run: async (p) => {
      const root = path.resolve(p.pos.root!);
      if (!fs.existsSync(root)) throw new UsageError(`${p.pos.root} does not exist`);
      let w: AlertWatcher;
      try {
        w = new AlertWatcher({
          root,
          webhook: p.flags.webhook as string | undefined,
          intervalMs: intFlag(p, "interval", 500, 50),
          includeExisting: !!p.flags.all,
          onAlert: p.flags.json ? (a) => jsonLine({ event: "alert", run: a.run, dir: a.dir, ...alertRecord(a.alert) }) : (a) => out(alertLine(a)),
          onWebhookError: (err) => errLine(`causeway watch: webhook: ${err.message}`),
          // "watching" is said once the first poll has set the baseline, so a run written after
          // that line is always reported (said before it, a run written at once could be taken
          // into the baseline by a slow first poll, and never reported); --all's existing alerts follow it
          onBaseline: () => (p.flags.json ? jsonLine({ event: "watching", root }) : out(`watching ${root} for new alerts (Ctrl-C to stop)`)),
        });
      } catch (err) {
        throw new UsageError((err as Error).message);
      }
      const done = untilSignal(async () => {
        w.stop();
        await w.drained();
      });
      w.start();
      return done;
    },
  },
  import: {
    usage: "causeway import otel FILE [--out DIR] [--trusted-tool T]... [--untrusted-tool T]... [--sensitive T]... [--json]",
    help: "import OpenTelemetry GenAI traces (OTLP/JSON or JSON Lines) as runs",
    spec: {
      positionals: ["kind", "file"],
      flags: { out: "string", "trusted-tool": "strings", "untrusted-tool": "strings", sensitive: "strings", json: "boolean" },
    },
    run: (p) => {
      if (p.pos.kind !== "otel") throw new UsageError(`import: unknown source ${JSON.stringify(p.pos.kind)} (supported: otel)`);
      const file = p.pos.file!;
      if (!fs.existsSync(file)) throw new UsageError(`${file} does not exist`);
      const outDir = path.resolve((p.flags.out as string | undefined) ?? "runs");
      let r: { runs: string[] };
      try {
        r = importOtel(file, outDir, {
          trustedTools: list(p, "trusted-tool"),
          untrustedTools: p.flags["untrusted-tool"] ? list(p, "untrusted-tool") : undefined,
          sensitiveTools: list(p, "sensitive"),
        });
      } catch (err) {
        errLine(`causeway import: ${(err as Error).message}`);
        return 1;
      }
      if (p.flags.json) json(r);
      else {
        out(`imported ${r.runs.length} run${r.runs.length === 1 ? "" : "s"} from ${file}:`);
        for (const d of r.runs) out(`  ${d}`);
      }
      return 0;
    },
  },
  "test-endpoint": {
    usage:
      "causeway test-endpoint RUN --decision SEQ --remove SPEC (--contains TEXT | --target SPEC) [--n N] [--n-max N] [--method betting|newcombe] [--base-url URL] [--api-key-env VAR] [--json]",
    help: `decision replay over HTTP: re-send a recorded call without a block, against an unchanged control call. ${PAIRS_HELP} (default: at most 20 pairs)`,
    details: RUNGS_HELP,
    spec: {
      positionals: ["run"],
      flags: {
        decision: "string",
        remove: "string",
        contains: "string",
        target: "string",
        n: "number",
        "n-max": "number",
        method: "string",
        "base-url": "string",
        "api-key-env": "string",
        "timeout-s": "number",
        json: "boolean",
      },
    },
    run: async (p) => {
      const dir = path.resolve(p.pos.run!);
      if (!fs.existsSync(path.join(dir, "events.jsonl"))) throw new UsageError(`${p.pos.run} is not a run folder (no events.jsonl)`);
      const decision = p.flags.decision as string | undefined;
      const remove = p.flags.remove as string | undefined;
      if (!decision || !remove) throw new UsageError("test-endpoint: --decision SEQ and --remove SPEC are required");
      parseIntervention(remove);
      const target = p.flags.target as string | undefined;
      if (target) parseTarget(target);
      if (target === undefined && p.flags.contains === undefined)
        throw new UsageError("test-endpoint: say what to measure with --contains TEXT or --target SPEC");
      const keyVar = p.flags["api-key-env"] as string | undefined;
      if (keyVar && !process.env[keyVar]) throw new UsageError(`--api-key-env: ${keyVar} is not set`);
      const { n, nMax, minPairs } = pairsOf(p, { n: 20, nMax: (k) => k });
      const method = (p.flags.method as string | undefined) ?? "betting";
      if (method !== "betting" && method !== "newcombe") throw new UsageError(`--method must be betting or newcombe, got ${JSON.stringify(method)}`);
      const which = /^\d+$/.test(decision) ? Number(decision) : decision;
      try {
        const run = readRun(dir);
        // a removal that changes nothing in the request is refused before any call
        refuseNoChange(rebuildRequest(new RunModel(run), which), remove);
        const r = await endpointDecisionTest(run, {
          decision: which,
          intervention: remove,
          contains: p.flags.contains as string | undefined,
          target,
          n,
          nMax,
          minPairs,
          baseUrl: p.flags["base-url"] as string | undefined,
          apiKey: keyVar ? process.env[keyVar] : undefined,
          timeoutMs: intFlag(p, "timeout-s", 120) * 1000,
          method,
        });
        if (p.flags.json) json(r);
        else out(formatTest(r));
        return 0;
      } catch (err) {
        if (!(err instanceof EndpointError)) throw err;
        errLine(`causeway test-endpoint: ${err.message}`);
        if (p.flags.json) json({ error: err.message, code: 1 });
        return 1;
      }
    },
  },
};

/** Refuses a removal that would send the recorded request unchanged, naming the blocks it could have matched. */
function refuseNoChange(req: RebuiltRequest, remove: string): void {
  const w = withoutBlocks(req, remove);
  if (w.removed + w.edited > 0) return;
  const ctx = req.decision.context ?? [];
  const sources = [
    ...new Set(
      req.record.blocks
        .map((b) => ctx[b.context])
        .filter((c) => c && c.kind !== "output")
        .map((c) => String(c.source)),
    ),
  ];
  const kept = w.kept ? `; it matches ${w.kept} block${w.kept === 1 ? "" : "s"} that can't be removed (assistant turns, tool definitions)` : "";
  throw new Refusal(
    `the removal ${JSON.stringify(remove)} changes nothing in decision #${req.decision.seq}'s request (its blocks' sources: ${sources.join(", ") || "none"})${kept}; nothing was sent or saved`,
  );
}
