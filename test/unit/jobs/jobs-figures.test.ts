/**
 * The figures of Find the cause on workers (bench/README.md, "Find the cause on workers") come
 * from bench/results/2026-12-06-jobs.json (`npm run bench:jobs`), and those with idle workers woken
 * from bench/results/2026-12-06-jobs-notify.json: this test rebuilds the tables' rows and the
 * figures quoted from the results files and fails when the document says otherwise.
 */
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = path.resolve(__dirname, "../../..");
const read = (f: string) => fs.readFileSync(path.join(ROOT, f), "utf8");

interface Row {
  scenario: string;
  workers: number | "local";
  wall_s: number;
  model_calls: number;
  stored_calls: number;
  same: boolean;
  lines?: number;
  lines_once: boolean;
}

describe("Find the cause on workers: published figures", () => {
  const doc = read("bench/README.md");
  const res = JSON.parse(read("bench/results/2026-12-06-jobs.json")) as { rows: Row[]; machine: { load_avg_1m: { mean: number } } };

  it("every row of the table is the results file's", () => {
    for (const r of res.rows) {
      const row = `| ${r.scenario} | ${r.workers} | ${r.wall_s} | ${r.model_calls} | ${r.stored_calls} | ${r.same ? "yes" : "NO"} | ${r.workers === "local" ? "—" : r.lines_once ? `yes (${r.lines})` : "NO"} |`;
      expect(doc).toContain(row);
    }
  });

  it("the speed-ups and call ratios quoted are the results file's", () => {
    const wall = (s: string, w: number | "local") => res.rows.find((r) => r.scenario === s && r.workers === w)!;
    for (const s of ["demo", "slow"]) {
      for (const n of [2, 4]) {
        const x = (wall(s, 1).wall_s / wall(s, n).wall_s).toFixed(2);
        expect(doc).toContain(`${s}: ${n} workers ${x}×`);
      }
      const ratio = (
        Math.max(...res.rows.filter((r) => r.scenario === s && r.workers !== "local").map((r) => r.stored_calls)) / wall(s, "local").model_calls
      ).toFixed(2);
      expect(doc).toContain(`${s}: at most ${ratio}× the local model calls`);
    }
    expect(doc).toContain(`load average ${res.machine.load_avg_1m.mean}`);
  });

  it("the rows and figures with idle workers woken are the second results file's", () => {
    const woken = JSON.parse(read("bench/results/2026-12-06-jobs-notify.json")) as { rows: Row[]; machine: { load_avg_1m: Record<string, number> } };
    for (const r of woken.rows) {
      const row = `| ${r.scenario} | ${r.workers} | ${r.wall_s} | ${r.model_calls} | ${r.stored_calls} | ${r.same ? "yes" : "NO"} | ${r.workers === "local" ? "—" : r.lines_once ? `yes (${r.lines})` : "NO"} |`;
      expect(doc).toContain(row);
    }
    const at = (rows: Row[], s: string, w: number | "local") => rows.find((r) => r.scenario === s && r.workers === w)!;
    expect(doc).toContain(`demo: ${at(woken.rows, "demo", 1).wall_s} s (was ${at(res.rows, "demo", 1).wall_s} s)`);
    const ratio = (rows: Row[]) => (at(rows, "slow", 1).wall_s / at(rows, "slow", "local").wall_s).toFixed(2);
    expect(doc).toContain(`slow: ${ratio(woken.rows)}× the local wall time\n(was ${ratio(res.rows)}×)`);
    const l = woken.machine.load_avg_1m;
    expect(doc).toContain(`load\naverage ${l.mean} on average (min ${l.min}, max ${l.max})`);
  });
});
