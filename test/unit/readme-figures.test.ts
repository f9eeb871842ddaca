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

  it("the calibration row is the results file's (both methods, every null)", () => {
    interface Batch { kind: string; scenario: string; method: string; tests: number; rate_false: number; coverage: number; ruled_out_30: number; fixed_n_bound_30: number | null; mean_pairs: number; rate_causal: number }
    const cal = results("2026-12-01-calibration-betting-vs-newcombe.json") as { batches: Batch[] };
    const pc = (x: number) => `${(100 * x).toFixed(1)}%`;
    const get = (kind: string, method: string, scenario?: string) => cal.batches.find((b) => b.kind === kind && b.method === method && (!scenario || b.scenario === scenario))!;
    const nulls = cal.batches.filter((b) => b.kind.startsWith("null"));
    expect(nulls.length).toBe(8);
    for (const b of cal.batches) expect(b.tests).toBeGreaterThanOrEqual(2000);
    const bet = nulls.filter((b) => b.method === "betting");
    const worstFalse = Math.max(...bet.map((b) => b.rate_false));
    expect(worstFalse).toBeLessThanOrEqual(0.05);
    expect(readme).toContain(`false causal/suppressive on nulls **≤ ${pc(worstFalse)}** with betting (Newcombe: up to **${pc(Math.max(...nulls.filter((b) => b.method === "newcombe").map((b) => b.rate_false)))}** with negatively correlated arms)`);
    expect(readme).toContain(`coverage ≥ ${pc(Math.min(...bet.map((b) => b.coverage)))}`);
    const same = get("null-identical", "betting");
    expect(readme).toContain(`identical arms ruled out in **${same.mean_pairs} pairs, ${Math.round((100 * same.ruled_out_30) / same.tests)}%**`);
    const [w, e] = [get("null-shift", "betting", "weak"), get("null-shift", "betting", "exfil")];
    expect(readme).toContain(`ruled out within 30 pairs in ${pc(w.ruled_out_30 / w.tests)} and ${pc(e.ruled_out_30 / e.tests)} (no valid 5% test can beyond ${pc(w.fixed_n_bound_30!)} and ${pc(e.fixed_n_bound_30!)} there)`);
    const power = get("power-25%", "betting");
    expect(readme).toContain(`25% follow found in **${pc(power.rate_causal)}**, **mean ${power.mean_pairs} pairs** (Newcombe ${get("power-25%", "newcombe").mean_pairs})`);
  });

  it("says the benchmark's model is a simulation and what its truth means", () => {
    expect(readme).toMatch(/model is a \*\*simulation\*\*/);
    expect(readme).toContain('"removing this\ninput changes the harm rate in the simulator"');
  });
});
