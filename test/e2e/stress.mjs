#!/usr/bin/env node
// The end-to-end suite under load: runs test/e2e/run.sh N times beside K CPU-bound processes
// (started here, always stopped here) and prints each scenario's pass count. A scenario that did
// not run in a run (its file crashed, the run was cut short) counts as not passed. Exits 1 if any
// scenario did not pass in every run.
//
//   npm run test:e2e:stress -- --runs N --hogs K     (defaults: --runs 1 --hogs 2)
//
// Each run's output goes to test/e2e/.cache/stress-<time>/run-<i>.log as well as here. The runs
// use the timeout scale .ci/run uses (E2E_TIMEOUT_SCALE, default 4 here as there), and package the
// .vsix once (the later runs reuse it). Env such as SCENARIOS passes through to run.sh.
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";

const HERE = path.dirname(new URL(import.meta.url).pathname);
const ROOT = path.resolve(HERE, "../..");

function parseArgs(argv) {
  const o = { runs: 1, hogs: 2 };
  for (let i = 0; i < argv.length; i++) {
    const m = /^--(runs|hogs)(?:=(.*))?$/.exec(argv[i]);
    if (!m) throw new Error(`unknown argument ${argv[i]} (usage: --runs N --hogs K)`);
    const v = Number(m[2] ?? argv[++i]);
    if (!Number.isInteger(v) || v < (m[1] === "runs" ? 1 : 0)) throw new Error(`--${m[1]} needs a whole number${m[1] === "runs" ? " >= 1" : " >= 0"}`);
    o[m[1]] = v;
  }
  return o;
}

/** Reads a JS string literal starting at s[i] (a quote); returns [value, index after it]. */
function stringAt(s, i) {
  const q = s[i];
  let out = "";
  for (let j = i + 1; j < s.length; j++) {
    const c = s[j];
    if (c === "\\") {
      const n = s[++j];
      out += { n: "\n", t: "\t", r: "\r" }[n] ?? n;
    } else if (c === q) return [out, j + 1];
    else if (q === "`" && c === "$" && s[j + 1] === "{")
      return [null, j]; // a computed name
    else out += c;
  }
  return [null, s.length];
}

/**
 * Every scenario of the suite (or of one scenario file): [{ file, name }], from the scenario()
 * calls' literal names.
 */
export function scenariosOf(where) {
  const out = [];
  const files = fs.statSync(where).isDirectory()
    ? fs
        .readdirSync(where)
        .filter((f) => f.endsWith(".test.mjs"))
        .sort()
        .map((f) => path.join(where, f))
    : [where];
  for (const full of files) {
    const file = path.basename(full);
    const src = fs.readFileSync(full, "utf8");
    for (const m of src.matchAll(/(?:^|[^\w.])(?:vs\.)?scenario\(\s*(?=['"`])/g)) {
      const [name] = stringAt(src, m.index + m[0].length);
      if (name === null) throw new Error(`${file}: a scenario whose name is computed: the stress count needs literal names`);
      out.push({ file: file.replace(/\.test\.mjs$/, ""), name });
    }
  }
  const seen = new Map();
  for (const s of out) {
    if (seen.has(s.name)) throw new Error(`the scenario name "${s.name}" is in both ${seen.get(s.name)} and ${s.file}: names must be unique to be counted`);
    seen.set(s.name, s.file);
  }
  return out;
}

/**
 * Results of node:test's TAP output (what it prints when stdout is not a terminal): the top-level
 * test points, name -> 'pass' | 'fail' | 'skip'. Indented points are subtests.
 */
export function tapResults(text) {
  const results = new Map();
  for (const line of text.split("\n")) {
    const m = /^(not ok|ok) \d+ - (.*?)(?: # (SKIP|TODO)\b.*)?$/.exec(line);
    if (!m) continue;
    const name = m[2].replace(/\\#/g, "#").replace(/\\\\/g, "\\");
    results.set(name, m[3] ? "skip" : m[1] === "ok" ? "pass" : "fail");
  }
  return results;
}

/** K processes that each keep a core busy; stop() ends them. */
function startHogs(k) {
  const hogs = [];
  for (let i = 0; i < k; i++) hogs.push(spawn(process.execPath, ["-e", "for (;;) {}"], { stdio: "ignore" }));
  const stop = () => {
    for (const h of hogs) if (h.exitCode === null && h.signalCode === null) h.kill("SIGKILL");
  };
  return { pids: hogs.map((h) => h.pid), stop };
}

/** Runs run.sh once; tees its output to `log` and this process's stdout. Resolves { code, text, ms }. */
function runSuite(env, log, onChild) {
  return new Promise((resolve) => {
    const t0 = Date.now();
    const out = fs.createWriteStream(log);
    let text = "";
    // its own process group: an interrupt here stops run.sh, whose trap stops code-server
    const child = spawn("bash", [path.join(HERE, "run.sh")], { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"], detached: true });
    onChild(child);
    const take = (stream, to) =>
      stream.on("data", (d) => {
        text += d;
        out.write(d);
        to.write(d);
      });
    take(child.stdout, process.stdout);
    take(child.stderr, process.stderr);
    child.on("close", (code, signal) => {
      out.end();
      onChild(undefined);
      resolve({ code: code ?? (signal ? 128 : 1), text, ms: Date.now() - t0 });
    });
  });
}

async function main() {
  const { runs, hogs } = parseArgs(process.argv.slice(2));
  // what run.sh runs: SCENARIOS (a file or folder, relative to the repo root) or every scenario
  const scenarios = scenariosOf(path.resolve(ROOT, process.env.SCENARIOS ?? path.join(HERE, "scenarios")));
  const stamp = new Date().toISOString().replace(/[:.]/g, "-");
  const dir = path.join(HERE, ".cache", `stress-${stamp}`);
  fs.mkdirSync(dir, { recursive: true });
  const env = { ...process.env, E2E_TIMEOUT_SCALE: process.env.E2E_TIMEOUT_SCALE ?? "4" };

  const load = startHogs(hogs);
  let current;
  const stopAll = () => {
    load.stop();
    if (current) {
      try {
        process.kill(-current.pid, "SIGTERM");
      } catch {
        /* gone */
      }
    }
  };
  process.on("exit", stopAll);
  for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"])
    process.on(sig, () => {
      stopAll();
      process.exit(130);
    });
  console.log(
    `stress: ${runs} run(s) of the end-to-end suite beside ${hogs} CPU-bound process(es) (pids ${load.pids.join(", ") || "none"}), E2E_TIMEOUT_SCALE=${env.E2E_TIMEOUT_SCALE}; logs in ${path.relative(ROOT, dir)}/`,
  );

  const passes = new Map(scenarios.map((s) => [s.name, 0]));
  const extra = new Map(); // test points the static list does not know (counted, shown apart)
  const summary = [];
  try {
    for (let i = 1; i <= runs; i++) {
      const runEnv = i > 1 ? { ...env, SKIP_PACKAGE: "1" } : env;
      console.log(`\n== stress run ${i}/${runs}`);
      const r = await runSuite(runEnv, path.join(dir, `run-${i}.log`), (c) => {
        current = c;
      });
      const results = tapResults(r.text);
      let passed = 0;
      for (const [name, res] of results) {
        const ok = res === "pass";
        if (ok) passed++;
        if (passes.has(name)) passes.set(name, passes.get(name) + (ok ? 1 : 0));
        else extra.set(name, (extra.get(name) ?? 0) + (ok ? 1 : 0));
      }
      summary.push(`run ${i}: exit ${r.code}, ${passed} of ${scenarios.length} scenarios passed, ${results.size} reported, ${(r.ms / 60_000).toFixed(1)} min`);
    }
  } finally {
    stopAll();
  }

  const load1 = fs.readFileSync("/proc/loadavg", "utf8").split(" ")[0];
  console.log(
    `\n== stress: pass counts over ${runs} run(s) beside ${hogs} CPU-bound process(es) (E2E_TIMEOUT_SCALE=${env.E2E_TIMEOUT_SCALE}, load average now ${load1})`,
  );
  for (const line of summary) console.log(line);
  let bad = 0;
  for (const s of scenarios) {
    const n = passes.get(s.name);
    if (n < runs) bad++;
    console.log(`${n < runs ? "✗" : "✓"} ${n}/${runs}  ${s.file}: ${s.name}`);
  }
  for (const [name, n] of extra) console.log(`? ${n}/${runs}  (not a scenario() of the suite): ${name}`);
  const total = scenarios.length;
  console.log(`stress: ${total - bad} of ${total} scenarios passed in every run${bad ? `; ${bad} did not` : ""}`);
  process.exitCode = bad ? 1 : 0;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((e) => {
    console.error(`stress: ${e.message}`);
    process.exit(2);
  });
}
