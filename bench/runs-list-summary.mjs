// Pools the loads of several runs of bench/vscode-runs-list.mjs (one build each) and prints, per
// build, the medians and ranges of the Runs view's figures, as a Markdown table:
//
//   node bench/runs-list-summary.mjs "label=results-a.json,results-b.json" "label2=…" > summary.md
//
// (paths relative to bench/results/). The README's row for 1,000 runs quotes this table, and
// test/unit/readme-figures.test.ts recomputes it from the same files.
import fs from "node:fs";
import path from "node:path";

const DIR = path.join(path.dirname(new URL(import.meta.url).pathname), "results");

/** The loads of the named results files, pooled. */
export function pooled(files) {
  return files.flatMap((f) => JSON.parse(fs.readFileSync(path.join(DIR, f), "utf8")).loads);
}

export function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

/** { median, min, max, n } of one figure over the loads (whole milliseconds). */
export function spread(loads, key) {
  const xs = loads.map((l) => l[key]).filter(Number.isFinite);
  return { median: Math.round(median(xs)), min: Math.round(Math.min(...xs)), max: Math.round(Math.max(...xs)), n: xs.length };
}

export const FIGURES = [
  ["warmRowsMs", "rows, view opened in a window where the extension is running"],
  ["rowsAfterActivationMs", "rows after activation, view opened in a new window"],
  ["rowsMs", "rows from the click, new window"],
  ["warmRowsDriverMs", "the first figure as the test driver timed it"],
];

if (import.meta.url === `file://${process.argv[1]}`) {
  const sets = process.argv.slice(2).map((a) => {
    const [label, files] = a.split("=");
    return { label, files: files.split(",") };
  });
  const cell = (s) => `**${s.median.toLocaleString("en")} ms** (${s.min.toLocaleString("en")}–${s.max.toLocaleString("en")})`;
  console.log(`| build | loads | ${FIGURES.map(([, t]) => t).join(" | ")} |`);
  console.log(`|---|---|${FIGURES.map(() => "---|").join("")}`);
  for (const { label, files } of sets) {
    const loads = pooled(files);
    console.log(`| ${label} | ${loads.length} | ${FIGURES.map(([k]) => cell(spread(loads, k))).join(" | ")} |`);
  }
  console.log(`\nFiles: ${sets.map(({ label, files }) => `${label}: ${files.join(", ")}`).join("; ")}.`);
}
