/**
 * The README's benchmark figures come from bench/results/: this test rebuilds them from the
 * results files and fails when the README (or bench/README.md) says something else.
 */
import { describe, it, expect } from "vitest";
import fs from "node:fs";
import path from "node:path";

const ROOT = path.resolve(__dirname, "../..");
const read = (f: string) => fs.readFileSync(path.join(ROOT, f), "utf8");
const results = (f: string) => JSON.parse(read(path.join("bench/results", f)));
const thousands = (n: number) => n.toLocaleString("en-US");

interface Method {
  exact: number;
  false_blames: number;
  abstained: number;
}
interface Scenario {
  name: string;
  harmful_runs: number;
  methods: Record<"reach" | "provenance" | "reuse" | "causeway", Method>;
}

describe("README figures", () => {
  const readme = read("README.md");
  const sim = results("2026-11-30-sim.json");
  const wide = results("2026-11-30-sim-n-max-160.json");
  const replay = results("2026-11-30-replay.json");
  const betting = results("2026-12-01-sim-betting.json");

  it("the per-scenario table of Find the cause and provenance is the results files'", () => {
    const cell = (m: Method, h: number) => `${m.exact}/${h}` + (m.abstained ? ` (abstains ${m.abstained})` : "") + (m.false_blames ? ` (${m.false_blames} false blames)` : "");
    const rows = (sim.scenarios as Scenario[])
      .filter((s) => s.harmful_runs > 0)
      .map((s) => {
        const w = (wide.scenarios as Scenario[]).find((x) => x.name === s.name)!;
        return `| ${s.name} | ${s.harmful_runs} | ${cell(s.methods.causeway, s.harmful_runs)} | ${cell(w.methods.causeway, w.harmful_runs)} | ${cell(s.methods.provenance, s.harmful_runs)} |`;
      });
    expect(rows).toHaveLength(11);
    for (const r of rows) expect(readme).toContain(r);
  });

  it("the headline counts and costs are the results files'", () => {
    const seeds = (sim.scenarios as Scenario[]).slice(0, 5);
    const harmful = seeds.reduce((a, s) => a + s.harmful_runs, 0);
    const exact = (k: keyof Scenario["methods"]) => seeds.reduce((a, s) => a + s.methods[k].exact, 0);
    expect(readme).toContain(`the seeds' five scenarios (${harmful} harmful runs)`);
    expect(readme).toContain(`exactly the true cause in ${exact("causeway")}/${harmful}`);
    expect(readme).toContain(`reach ${exact("reach")}/${harmful}, provenance ${exact("provenance")}/${harmful}`);
    // the cost row: the default (betting) against newcombe and the reference, each from its results file
    expect(readme).toContain(`**${thousands(betting.seeds_model_calls)} model calls** with the paired betting sequence, against ${thousands(sim.seeds_model_calls)} with \`--method newcombe\``);
    expect(readme).toContain(`the reference's ${thousands(sim.reference.total_model_calls)}`);
    expect(readme).toContain(`whole benchmark (12 scenarios) ${sim.wall_s.toFixed(1)} s`);
    expect(read("bench/README.md")).toContain(`All 12 scenarios: ${thousands(sim.total_model_calls)} calls.`);

    const [on] = replay.attribution as { wall_ms: number; model_calls: number; naive_model_calls: number }[];
    expect(readme).toContain(`(${on.model_calls} with \`--method newcombe\``); // the demo's Find the cause, the reference's method
    expect(readme).toContain(`**${thousands(replay.throughput.calls_per_s)} model calls/s**`);
    expect(read("bench/README.md")).toContain(`| on | ${on.wall_ms} ms | ${on.model_calls} | ${on.naive_model_calls} |`);
  });

  it("says the benchmark's model is a simulation and what its truth means", () => {
    expect(readme).toMatch(/model is a \*\*simulation\*\*/);
    expect(readme).toContain('"removing this\ninput changes the harm rate in the simulator"');
  });

  it("Find the cause on the unmodified examples: each row is the newest results file's, the rest marked pending", () => {
    const file = fs.readdirSync(path.join(ROOT, "bench/results")).filter((f) => f.endsWith("-unmodified.json")).sort().at(-1)!;
    const rows = results(file).rows as { example: string; model_calls: number; program_runs: number; wall_s: number; causes: string[] }[];
    const lines = readme.split("\n").filter((l) => l.startsWith("| `node examples/"));
    for (const r of rows) {
      const line = lines.find((l) => l.startsWith(`| \`${r.example}\` |`));
      expect(line, r.example).toBeDefined();
      // `…{"name":"vendor-note"} primary +0.72 [0.40, 0.89]` → `vendor note, primary, +0.72 [0.40, 0.89]`
      const causes = r.causes.map((c) => {
        const m = /"name":"([^"]+)"\} (primary|contributing|confirmed) (\S+ \[[^\]]+\])$/.exec(c);
        return m ? `${m[1].replace(/-/g, " ")}, ${m[2]}, ${m[3]}` : c;
      });
      expect(line).toBe(`| \`${r.example}\` | ${r.model_calls} | ${r.program_runs} | ${Math.round(r.wall_s)} s | ${causes.join("; ")} |`);
    }
    // a row without results says so
    for (const l of lines.filter((l) => !rows.some((r) => l.startsWith(`| \`${r.example}\` |`)))) expect(l).toContain("FIGURES PENDING");
  });
});
