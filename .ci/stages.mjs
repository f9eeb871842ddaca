#!/usr/bin/env node
// Runs the README's test command (package.json's "test" script) stage by stage, as npm would run
// it (sh -c, node_modules/.bin on PATH, stopping at the first failing stage), and prints what each
// stage cost: the CI's budget is read from this table. Used by .ci/run.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..");
const script = JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8")).scripts.test;
const stages = script.split(/\s+&&\s+/);

/** A short name for a stage's command. */
function label(cmd) {
  const names = [
    [/npm run typecheck/, "typecheck"],
    [/npm run lint/, "lint"],
    [/^node esbuild\.mjs/, "build"],
    [/node22\/setup\.sh/, "node22 setup"],
    [/^vitest run/, "unit"],
    [/e2e\/setup\.sh/, "e2e setup"],
    [/test:browser/, "browser"],
    [/install\/from-clone/, "install"],
    [/test:e2e\b/, "e2e"],
  ];
  return names.find(([re]) => re.test(cmd))?.[1] ?? cmd;
}

const env = { ...process.env, PATH: `${path.join(ROOT, "node_modules/.bin")}${path.delimiter}${process.env.PATH}` };
const done = [];
let failed;
const t0 = Date.now();
for (const cmd of stages) {
  const name = label(cmd);
  console.log(`\n== stage ${name}: ${cmd}`);
  const t = Date.now();
  const r = spawnSync("sh", ["-c", cmd], { cwd: ROOT, env, stdio: "inherit" });
  const s = (Date.now() - t) / 1000;
  done.push([name, s, r.status]);
  console.log(`== stage ${name}: ${r.status === 0 ? "passed" : `FAILED (exit ${r.status ?? r.signal})`} in ${s.toFixed(1)} s`);
  if (r.status !== 0) {
    failed = name;
    break;
  }
}
const total = (Date.now() - t0) / 1000;
console.log("\n== stages (seconds)");
for (const [name, s, status] of done) console.log(`${name.padEnd(14)} ${s.toFixed(1).padStart(7)}${status === 0 ? "" : "  FAILED"}`);
console.log(
  `${"total".padEnd(14)} ${total.toFixed(1).padStart(7)}  (load average now ${fs.readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ")})`,
);
if (failed) {
  console.log(`== the test command failed at the stage ${failed}`);
  process.exit(1);
}
