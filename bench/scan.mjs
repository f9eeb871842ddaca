// How long the e-mail scan takes on a hostile tool argument (a long run of word characters),
// against the regular expression it replaced, which is quadratic there. Writes
// bench/results/<date>-scan.{json,md}.   node esbuild.mjs && node bench/scan.mjs
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createRequire } from "node:module";

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..");
const { findEmails, globMatch } = createRequire(import.meta.url)(path.join(ROOT, "dist/lib/index.js"));
const EMAIL = /[\w.+-]+@[\w-]+(?:\.[\w-]+)+/g;

const time = (f) => {
  const t0 = process.hrtime.bigint();
  f();
  return Number(process.hrtime.bigint() - t0) / 1e6;
};
const best = (f, k = 3) => Math.min(...Array.from({ length: k }, () => time(f)));

const rows = [];
for (const [n, tail] of [
  [10_000, ""],
  [20_000, ""],
  [1_000_000, ""],
  [1_000_000, "@"],
  [1_000_000, "@x.example"],
]) {
  const s = "a".repeat(n) + tail;
  const scan = best(() => findEmails(s));
  // the old regex: only where it finishes in reasonable time (quadratic: 1 MB would take hours)
  const re = n <= 20_000 ? best(() => s.match(EMAIL), 1) : null;
  rows.push({
    input: `${n.toLocaleString("en")} word characters${tail ? ` + "${tail}"` : ""}`,
    scan_ms: +scan.toFixed(2),
    regex_ms: re === null ? null : +re.toFixed(1),
  });
}
const glob = "*a".repeat(30) + "b";
const text = "a".repeat(100_000);
rows.push({ input: `glob "*a"×30+"b" vs 100,000 characters`, scan_ms: +best(() => globMatch(glob, text)).toFixed(2), regex_ms: null });

const result = {
  command: "node bench/scan.mjs",
  date: new Date().toISOString(),
  machine: { cpus: os.cpus().length, loadavg: os.loadavg().map((x) => Math.round(x * 10) / 10), node: process.version },
  rows,
};
const stem = `${new Date().toISOString().slice(0, 10)}-scan`;
fs.mkdirSync(path.join(ROOT, "bench/results"), { recursive: true });
fs.writeFileSync(path.join(ROOT, "bench/results", `${stem}.json`), JSON.stringify(result, null, 1) + "\n");
const md = [
  "# Linear scans over run content (issue 11)",
  "",
  `\`${result.command}\` — ${result.date}, ${result.machine.cpus} CPUs shared with other jobs (load ${result.machine.loadavg.join(", ")}), Node ${result.machine.node}. Best of 3 (the old regex: one try, skipped at 1 MB).`,
  "",
  "| input | findEmails / globMatch (ms) | old regular expression (ms) |",
  "|---|---|---|",
  ...rows.map((r) => `| ${r.input} | ${r.scan_ms} | ${r.regex_ms ?? "not run (quadratic / exponential)"} |`),
  "",
].join("\n");
fs.writeFileSync(path.join(ROOT, "bench/results", `${stem}.md`), md);
process.stdout.write(md);
