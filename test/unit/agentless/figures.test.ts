/**
 * The figures of Find the cause without the program quoted in bench/README.md are the results
 * files' (bench/results/*-agentless.json and *-agentless-per-document.json, the newest of each):
 * every number in the README's row is rebuilt from them.
 */
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = path.resolve(__dirname, "../../..");
const RESULTS = path.join(ROOT, "bench/results");

interface Row {
  example: string;
  model_calls: number;
  wall_s: number;
  causes: string[];
}
interface Result {
  latency_ms: number;
  workers: number;
  rows: Row[];
  program_replays: { file: string | null; rows: { example: string; model_calls: number; wall_s: number }[] };
}

const newest = (suffix: string): { file: string; r: Result } => {
  const file = fs
    .readdirSync(RESULTS)
    .filter((f) => f.endsWith(`-${suffix}.json`) && /^\d{4}-\d{2}-\d{2}-/.test(f) && f.slice(11) === `${suffix}.json`)
    .sort()
    .at(-1)!;
  return { file, r: JSON.parse(fs.readFileSync(path.join(RESULTS, file), "utf8")) };
};
const name = (example: string) => (example.includes("anthropic") ? "Anthropic" : "OpenAI");

describe("bench/README.md: Find the cause without the program", () => {
  const readme = fs.readFileSync(path.join(ROOT, "bench/README.md"), "utf8");
  const row = readme.split("\n").find((l) => l.startsWith("| Find the cause without the program"));

  it("the row quotes each example's model calls and wall time, the program replays' beside them, and the results files", () => {
    expect(row).toBeDefined();
    const { file, r } = newest("agentless");
    expect(r.latency_ms).toBe(300);
    expect(r.workers).toBe(8);
    expect(row).toContain(`results/${file.replace(/\.json$/, ".md")}`);
    for (const x of r.rows) {
      expect(row).toContain(`${name(x.example)}: **${x.model_calls} model calls, ${x.wall_s} s**`);
      expect(x.wall_s).toBeLessThan(60);
      const p = r.program_replays.rows.find((q) => q.example === x.example)!;
      expect(row).toContain(`(program replays: ${p.model_calls} calls, ${p.wall_s} s)`);
    }
    const per = newest("agentless-per-document");
    expect(row).toContain(`results/${per.file.replace(/\.json$/, ".md")}`);
    for (const x of per.r.rows) {
      expect(x.causes).toHaveLength(1);
      expect(x.causes[0]).toContain('{"name":"vendor-note"} primary');
      expect(row).toContain(`${name(x.example)} ${x.model_calls} calls, ${x.wall_s} s`);
    }
  });
});
