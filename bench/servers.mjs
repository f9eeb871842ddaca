#!/usr/bin/env node
/**
 * Capture servers under hostile clients: starts `causeway serve` (dist/cli.js) and measures
 *   huge-number   a body holding one integer of 20 million digits: its answer and how long it took;
 *                 /healthz is asked every 20 ms meanwhile (its slowest answer is reported);
 *   slow-headers  300 connections that send part of a request (or nothing) and go quiet: how long
 *                 until the collector has closed them all (header timeout --header-timeout-s 2),
 *                 and /healthz's slowest answer meanwhile.
 * Writes bench/results/<date>-servers.{json,md} with --out-dir bench/results.
 *
 *   npm run bench:servers [-- --json] [-- --out-dir bench/results]
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, "..");
const CLI = path.join(root, "dist/cli.js");
const TOKEN = "bench-token";
const arg = (name) => {
  const i = process.argv.indexOf(`--${name}`);
  return i < 0 ? undefined : process.argv[i + 1];
};

function serve(dir, extra) {
  const child = spawn(process.execPath, [CLI, "serve", dir, "--token-env", "CW_BENCH_TOKEN", "--port", "0", "--quiet", ...extra], {
    stdio: ["ignore", "pipe", "inherit"],
    env: { ...process.env, CW_BENCH_TOKEN: TOKEN },
  });
  let out = "";
  return new Promise((resolve, reject) => {
    child.stdout.on("data", (d) => {
      out += d;
      const m = /collector on http:\/\/127\.0\.0\.1:(\d+)/.exec(out);
      if (m) resolve({ child, port: Number(m[1]) });
    });
    child.once("exit", (code) => reject(new Error(`serve exited ${code}`)));
  });
}

function get(port, p) {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    http
      .get({ host: "127.0.0.1", port, path: p, agent: false }, (res) => {
        res.resume();
        res.on("end", () => resolve({ status: res.statusCode, ms: performance.now() - t0 }));
      })
      .on("error", reject);
  });
}

/** Asks /healthz every 20 ms until stop(); returns the slowest answer and how many were asked. */
function watchHealth(port) {
  let stop = false;
  let worst = 0;
  let n = 0;
  let failed = 0;
  const loop = (async () => {
    while (!stop) {
      try {
        const r = await get(port, "/healthz");
        if (r.status !== 200) failed++;
        worst = Math.max(worst, r.ms);
      } catch {
        failed++;
      }
      n++;
      await new Promise((r) => setTimeout(r, 20));
    }
  })();
  return async () => {
    stop = true;
    await loop;
    return { healthz_asked: n, healthz_failed: failed, healthz_slowest_ms: Math.round(worst) };
  };
}

async function hugeNumber(port) {
  const body = Buffer.concat([Buffer.from('{"events": [{"seq": '), Buffer.alloc(20_000_000, "7"), Buffer.from("}]}")]);
  const health = watchHealth(port);
  const t0 = performance.now();
  const r = await new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: "127.0.0.1",
        port,
        path: "/v1/ingest",
        method: "POST",
        headers: { authorization: `Bearer ${TOKEN}`, "content-length": body.length },
        agent: false,
      },
      (res) => {
        let text = "";
        res.on("data", (d) => (text += d));
        res.on("end", () => resolve({ status: res.statusCode, error: JSON.parse(text).error }));
      },
    );
    req.on("error", reject);
    req.end(body);
  });
  const ms = performance.now() - t0;
  return { body_bytes: body.length, status: r.status, error: r.error, answered_ms: Math.round(ms), ...(await health()) };
}

async function slowHeaders(port, n) {
  const health = watchHealth(port);
  const t0 = performance.now();
  const closes = [];
  for (let i = 0; i < n; i++) {
    closes.push(
      new Promise((resolve) => {
        const s = net.connect(port, "127.0.0.1", () =>
          s.write(i % 3 === 0 ? "" : i % 3 === 1 ? "POST /v1/ingest HTTP/1.1\r\n" : "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "),
        );
        s.on("error", () => {});
        s.resume();
        s.on("close", resolve);
      }),
    );
  }
  await Promise.all(closes);
  const ms = performance.now() - t0;
  return { clients: n, header_timeout_s: 2, all_closed_after_ms: Math.round(ms), ...(await health()) };
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cw-bench-servers-"));
const { child, port } = await serve(dir, ["--header-timeout-s", "2"]);
try {
  const result = {
    date: new Date().toISOString(),
    node: process.version,
    cpus: os.cpus().length,
    loadavg_1m: Number(os.loadavg()[0].toFixed(2)),
    huge_number: await hugeNumber(port),
    slow_headers: await slowHeaders(port, 300),
  };
  if (process.argv.includes("--json")) process.stdout.write(JSON.stringify(result, null, 1) + "\n");
  else {
    console.log(
      `huge number (${result.huge_number.body_bytes} bytes): ${result.huge_number.status} in ${result.huge_number.answered_ms} ms; /healthz slowest ${result.huge_number.healthz_slowest_ms} ms, failed ${result.huge_number.healthz_failed}/${result.huge_number.healthz_asked}`,
    );
    console.log(
      `300 slow-header clients: all closed after ${result.slow_headers.all_closed_after_ms} ms (header timeout 2 s); /healthz slowest ${result.slow_headers.healthz_slowest_ms} ms, failed ${result.slow_headers.healthz_failed}/${result.slow_headers.healthz_asked}`,
    );
  }
  const outDir = arg("out-dir");
  if (outDir) {
    const stem = `${result.date.slice(0, 10)}-servers`;
    fs.mkdirSync(outDir, { recursive: true });
    fs.writeFileSync(path.join(outDir, `${stem}.json`), JSON.stringify(result, null, 1) + "\n");
    const h = result.huge_number;
    const s = result.slow_headers;
    fs.writeFileSync(
      path.join(outDir, `${stem}.md`),
      `# Capture servers under hostile clients (\`npm run bench:servers -- --out-dir bench/results\`)\n\n` +
        `${result.date}, Node ${result.node}, ${result.cpus} CPUs, load average ${result.loadavg_1m}.\n\n` +
        `| case | answer | time | /healthz meanwhile (every 20 ms) |\n|---|---|---|---|\n` +
        `| one integer of 20,000,000 digits (${h.body_bytes} bytes, authenticated) | ${h.status} | ${h.answered_ms} ms | slowest ${h.healthz_slowest_ms} ms, ${h.healthz_failed} of ${h.healthz_asked} failed |\n` +
        `| 300 slow-header connections, --header-timeout-s 2 | all closed by the server | ${s.all_closed_after_ms} ms | slowest ${s.healthz_slowest_ms} ms, ${s.healthz_failed} of ${s.healthz_asked} failed |\n`,
    );
  }
} finally {
  child.kill("SIGTERM");
  fs.rmSync(dir, { recursive: true, force: true });
}
