/**
 * The benchmark figures (bench/README.md's Figures, the unmodified examples' table in
 * docs/unmodified.md) come from bench/results/: this test rebuilds them from the results files and
 * fails when a document says something else. The README's demo transcript is checked against
 * what `causeway demo` prints.
 */
import { describe, it, expect } from "vitest";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
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

describe("published figures", () => {
  const readme = read("README.md");
  const figures = read("bench/README.md");
  const unmodified = read("docs/unmodified.md");
  const sim = results("2026-11-30-sim.json");
  const wide = results("2026-11-30-sim-n-max-160.json");
  const replay = results("2026-11-30-replay.json");
  const betting = results("2026-12-02-sim-betting.json");

  it("the per-scenario table of Find the cause and provenance is the results files'", () => {
    const cell = (m: Method, h: number) =>
      `${m.exact}/${h}` + (m.abstained ? ` (abstains ${m.abstained})` : "") + (m.false_blames ? ` (${m.false_blames} false blames)` : "");
    const rows = (sim.scenarios as Scenario[])
      .filter((s) => s.harmful_runs > 0)
      .map((s) => {
        const w = (wide.scenarios as Scenario[]).find((x) => x.name === s.name)!;
        return `| ${s.name} | ${s.harmful_runs} | ${cell(s.methods.causeway, s.harmful_runs)} | ${cell(w.methods.causeway, w.harmful_runs)} | ${cell(s.methods.provenance, s.harmful_runs)} |`;
      });
    expect(rows).toHaveLength(11);
    for (const r of rows) expect(figures).toContain(r);
  });

  it("the headline counts and costs are the results files'", () => {
    const seeds = (sim.scenarios as Scenario[]).slice(0, 5);
    const harmful = seeds.reduce((a, s) => a + s.harmful_runs, 0);
    const exact = (k: keyof Scenario["methods"]) => seeds.reduce((a, s) => a + s.methods[k].exact, 0);
    expect(figures).toContain(`the seeds' five scenarios (${harmful} harmful runs)`);
    expect(figures).toContain(`exactly the true cause in ${exact("causeway")}/${harmful}`);
    expect(figures).toContain(`reach ${exact("reach")}/${harmful}, provenance ${exact("provenance")}/${harmful}`);
    // the cost row: the default (betting) against newcombe and the reference, each from its results file
    expect(figures).toContain(
      `**${thousands(betting.seeds_model_calls)} model calls** with the paired betting sequence, against ${thousands(sim.seeds_model_calls)} with \`--method newcombe\``,
    );
    expect(figures).toContain(`the reference's ${thousands(sim.reference.total_model_calls)}`);
    // issue 13's targets at the default budget, betting: weak and suppressor exact counts
    const bet = (name: string) => (betting.scenarios as Scenario[]).find((s) => s.name === name)!;
    for (const name of ["weak", "suppressor"]) expect(figures).toContain(`${name} **${bet(name).methods.causeway.exact}/${bet(name).harmful_runs}**`);
    expect(figures).toContain(`whole benchmark (12 scenarios) ${sim.wall_s.toFixed(1)} s`);
    expect(figures).toContain(`All 12 scenarios: ${thousands(sim.total_model_calls)} calls.`);

    const [on] = replay.attribution as { wall_ms: number; model_calls: number; naive_model_calls: number }[];
    expect(figures).toContain(`(${on.model_calls} with \`--method newcombe\``); // the demo's Find the cause, the reference's method
    // the demo's Find the cause as the README runs it, through the CLI (npm run bench:replay -- --demo-find-cause)
    const demo = results("2026-12-02-demo-find-cause.json") as { methods: { method: string; model_calls: number; causes: { spec: string; role: string }[] }[] };
    const by = Object.fromEntries(demo.methods.map((m) => [m.method, m]));
    expect(by.betting.causes).toEqual([expect.objectContaining({ spec: "input:vendor:portal/notes.md", role: "primary" })]);
    expect(figures).toContain(
      `vendor note alone, primary; **${by.betting.model_calls} model calls** with the paired betting sequence (${by.newcombe.model_calls} with \`--method newcombe\``,
    );
    expect(figures).toContain(`**${thousands(replay.throughput.calls_per_s)} model calls/s**`);
    expect(figures).toContain(`| on | ${on.wall_ms} ms | ${on.model_calls} | ${on.naive_model_calls} |`);
  });

  it("the collectors-on-PostgreSQL row is the store benchmark's results file", () => {
    const store = results("2026-12-01-store.json");
    const phases = [store.load, store.kill, store.restart];
    // the bench's own pass condition, restated: every phase's runs whole, identical and verified
    for (const p of phases) {
      expect(p.failed_agents).toBe(0);
      expect(p.check.identical).toBe(p.check.runs);
      expect(p.check.verified).toBe(p.check.runs);
      expect(p.check.events_stored).toBe(p.check.events_expected);
      expect(p.check.blobs_stored).toBe(p.check.blobs_expected);
    }
    expect(store.settings).toMatchObject({ agents: 50, events: 2000, collectors: 2 });
    const pages = Object.values<{ p50_ms: number; max_ms: number }>(store.listing.timings);
    const maxPage = Math.max(...pages.map((t) => t.max_ms));
    // the target is one page in ≤ 200 ms: the median page of every filter meets it (the slowest
    // single request is stated as measured, beside it)
    for (const t of pages) expect(t.p50_ms).toBeLessThanOrEqual(200);
    const events = phases.reduce((a, p) => a + p.events_total, 0);
    const la = store.machine.load_avg_1m;
    expect(figures).toContain(
      `| Collectors on PostgreSQL: ${store.settings.agents} agent processes × ${thousands(store.settings.events)} events → 2 collectors → 1 database, then kill -9 a collector and restart PostgreSQL under load | **every run byte-identical and verified, nothing lost or duplicated** in all three phases (${thousands(events)} events); ${thousands(store.load.events_per_s)} events/s, batch p50 ${Math.round(store.load.batch_ms_p50)} ms, p99 ${Math.round(store.load.batch_ms_p99)} ms on 2 shared cores at load average ${la.mean} (max ${la.max}); one filtered page of ${thousands(store.listing.runs_in_table)} runs p50 **${Math.min(...pages.map((t) => t.p50_ms))}–${Math.max(...pages.map((t) => t.p50_ms))} ms**, slowest of ${pages.length * 20} requests ${maxPage} ms (target ≤ 200 ms) | \`npm run bench:store\` |`,
    );
    const scale = read("docs/scale.md");
    for (const [name, p] of [
      ["load", store.load],
      ["kill", store.kill],
      ["restart", store.restart],
    ] as const) {
      expect(scale).toContain(
        `| ${name} | ${p.agents} × ${thousands(p.events_per_agent)} | ${thousands(p.events_total)} | ${thousands(p.events_per_s)} | ${Math.round(p.batch_ms_p50)} ms | ${Math.round(p.batch_ms_p99)} ms | ${p.check.identical} / ${p.check.runs} | 0 / 0 |`,
      );
    }
  });

  it("the big graph's figures are its results file's", () => {
    const md = read("bench/results/2026-12-02-webview-graph-svg-lazy-cytoscape.md");
    const [quiet, loaded] = md.split("## Beside");
    /** Medians of the runs of one size and build, in the results file's order. */
    const medians = (part: string, events: string, build: "before" | "after") =>
      [...part.matchAll(new RegExp(`^\\| ${events} \\| [^|]+ \\| ${build}[^|]* \\| \\d \\| [\\d,]+ / \\*\\*([\\d,]+)\\*\\* / [\\d,]+ ms \\|`, "gm"))].map((m) =>
        Number(m[1].replace(/,/g, "")),
      );
    const ms = (xs: number[], bold = true) =>
      bold ? `**${xs.slice(0, -1).map(thousands).join(" ms, ")} ms and ${thousands(xs.at(-1)!)} ms**` : xs.map(thousands).join(", ");
    const big = medians(quiet, "1,473", "after");
    const mid = medians(quiet, "597", "after");
    const small = medians(quiet, "58", "after");
    for (const xs of [big, mid, small]) expect(xs).toHaveLength(3);
    expect(figures).toContain(`1,473 events interactive after ${ms(big)} (before: ${ms(medians(quiet, "1,473", "before"), false)} ms)`);
    expect(figures).toContain(`597 events (585 nodes) ${ms(mid)} (before, Cytoscape: ${ms(medians(quiet, "597", "before"), false)} ms)`);
    expect(figures).toContain(`58 events ${ms(small)} (${ms(medians(quiet, "58", "before"), false)} ms)`);
    expect(figures).toContain(`1,473 events ${ms(medians(loaded, "1,473", "after"), false)} ms; 597 events ${ms(medians(loaded, "597", "after"), false)} ms`);
    const huge = medians(quiet, "20,000", "after");
    expect(figures).toContain(`20,001 events: **${thousands(huge[0])} ms** (median of 3)`);
    // "the 1 s and 3 s targets are met (quiet, in every run)"
    expect([...big, ...mid, ...small].every((m) => m <= 1000)).toBe(true);
    expect(huge[0]).toBeLessThanOrEqual(3000);
  });

  it("the report row is the report bench's quiet measurement", () => {
    interface Row {
      cli: string;
      events: number;
      median_ms: number;
      median_cpu_ms: number;
      peak_kb: number;
    }
    const file = results("2026-12-02-report.json") as { results: Row[] };
    const row = (events: number) => file.results.filter((r) => r.cli.startsWith("after, quiet") && r.events === events).at(-1)!;
    const big = row(20001);
    expect(figures).toContain(
      `20,001 events: **${(big.median_ms / 1000).toFixed(1)} s** (median of 3, load average 2.2; ${(big.median_cpu_ms / 1000).toFixed(1)} s CPU, peak ${Math.round(big.peak_kb / 1024)} MB`,
    );
    expect(figures).toContain(`1,473 events: ${(row(1473).median_ms / 1000).toFixed(1)} s ([results](results/2026-12-02-report.md))`);
  });

  it("the 1,000-runs row is the runs-list summary's, and the summary is its script's output over the files it names", () => {
    const md = read("bench/results/2026-12-03-vscode-runs-list-s25.md");
    // the summary's sets, as its "Files:" line names them, given to the script again
    const sets = /^Files: (.*)\.$/m
      .exec(md)![1]
      .split("; ")
      .map((x) => {
        const [label, files] = x.split(": ");
        return { label, files: files.split(", ") };
      });
    const out = spawnSync(process.execPath, [path.join(ROOT, "bench/runs-list-summary.mjs"), ...sets.map((x) => `${x.label}=${x.files.join(",")}`)], {
      encoding: "utf8",
    });
    expect(out.status, out.stderr).toBe(0);
    expect(md).toContain(out.stdout.trim());
    type Load = Record<string, number>;
    const loads = (label: string) => sets.find((x) => x.label === label)!.files.flatMap((f) => (results(f) as { loads: Load[] }).loads);
    const median = (xs: number[]) => {
      const s = [...xs].sort((a, b) => a - b);
      return Math.round(s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2);
    };
    const fig = (label: string, key: string) => {
      const xs = loads(label).map((l) => l[key]);
      return { median: median(xs), min: Math.round(Math.min(...xs)), max: Math.round(Math.max(...xs)), n: xs.length };
    };
    const ms = (n: number) => `${thousands(n)} ms`;
    const [start, now] = [sets[1].label, sets.at(-1)!.label];
    const warm = fig(now, "warmRowsMs");
    const cold = fig(now, "rowsAfterActivationMs");
    expect(figures).toContain(
      `opened in a window where Causeway is running: **${ms(warm.median)}** median (${warm.n} loads, ${thousands(warm.min)}–${thousands(warm.max)}; ${ms(fig(start, "warmRowsMs").median)} at the start of this round); in a new window, **${ms(cold.median)}** after Causeway's activation (${thousands(cold.min)}–${thousands(cold.max)})`,
    );
    expect(figures).toContain(
      `analyses nothing (bench/control-tree): **${ms(fig("control", "warmRowsMs").median)}** and **${ms(fig("control", "rowsAfterActivationMs").median)}** (${fig("control", "warmRowsMs").n} loads)`,
    );
    expect(figures).toContain(`Causeway's listing is served a median ${ms(fig(now, "warmListedMs").median)} after the click`);
    // "met by the medians": both of Causeway's figures are at most 1 s
    expect(figures).toContain("The 1 s target is met by the medians");
    expect(Math.max(warm.median, cold.median)).toBeLessThanOrEqual(1000);
    // "narrowly": the first figure over the runs where all the builds alternated (the run number
    // that ends each of the start's files), and the gap to the control
    const round = (f: string) => /-(\d+)\.json$/.exec(f)![1];
    const paired = new Set(sets.find((x) => x.label === start)!.files.map(round));
    const pairedWarm = median(
      sets
        .find((x) => x.label === now)!
        .files.filter((f) => paired.has(round(f)))
        .flatMap((f) => (results(f) as { loads: Load[] }).loads.map((l) => l.warmRowsMs)),
    );
    expect(figures).toContain(
      `in the runs where the three builds alternated it was ${ms(pairedWarm)} (${ms(fig(start, "warmRowsMs").median)} at the start of this round), and the control's rows come about ${((warm.median - fig("control", "warmRowsMs").median) / 1000).toFixed(1)} s sooner`,
    );
    // the driver's round trips: the spread of (driver - page) over the same loads
    const extra = loads(now)
      .concat(loads("control"))
      .map((l) => l.warmRowsDriverMs - l.warmRowsMs);
    expect(figures).toContain(
      `The test driver's own timing of the same loads adds ${(Math.min(...extra) / 1000).toFixed(1)}–${(Math.max(...extra) / 1000).toFixed(1)} s of round trips`,
    );
  });

  it("the CI row is the fresh clone's log lines", () => {
    const log = read("bench/results/2026-12-02-ci-fresh-clone.md");
    const n = (re: RegExp) => Number(re.exec(log)![1]);
    const unit = n(/^ {6}Tests {2}(\d+) passed/m);
    const [browser, e2e] = [...log.matchAll(/^# pass (\d+)$/gm)].map((m) => Number(m[1]));
    expect(figures).toContain(`${unit} unit, ${browser} browser and ${e2e} end-to-end tests`);
    expect(figures).toContain(`**${thousands(n(/^== CI passed in (\d+) s/m))} s** beside`);
    expect(figures).toContain(
      `unit tests ${Math.round(n(/^ {3}Duration {2}([\d.]+)s/m))} s, code-server setup ${n(/^setup done in (\d+) s/m)} s, browser tests ${Math.round(Number(/^# duration_ms ([\d.]+)/m.exec(log)![1]) / 1000)} s, end-to-end ${Math.round(n(/^e2e: exit 0, total wall time ([\d.]+) s/m))} s`,
    );
  });

  it("the calibration row is the results file's (both methods, every null)", () => {
    interface Batch {
      kind: string;
      scenario: string;
      method: string;
      tests: number;
      rate_false: number;
      coverage: number;
      ruled_out_30: number;
      fixed_n_bound_30: number | null;
      mean_pairs: number;
      rate_causal: number;
    }
    interface AttributionNull {
      null: string;
      method: string;
      attributions: number;
      blamed: number;
      rate_blamed: number;
    }
    const cal = results("2026-12-02-calibration-betting-vs-newcombe.json") as { batches: Batch[]; attribution_nulls: AttributionNull[] };
    const pc = (x: number) => `${(100 * x).toFixed(1)}%`;
    const get = (kind: string, method: string, scenario?: string) =>
      cal.batches.find((b) => b.kind === kind && b.method === method && (!scenario || b.scenario === scenario))!;
    const nulls = cal.batches.filter((b) => b.kind.startsWith("null"));
    expect(nulls.length).toBe(8);
    for (const b of cal.batches) expect(b.tests).toBeGreaterThanOrEqual(2000);
    const bet = nulls.filter((b) => b.method === "betting");
    const worstFalse = Math.max(...bet.map((b) => b.rate_false));
    expect(worstFalse).toBeLessThanOrEqual(0.05);
    expect(figures).toContain(
      `false causal/suppressive on nulls **≤ ${pc(worstFalse)}** with betting (Newcombe: up to **${pc(Math.max(...nulls.filter((b) => b.method === "newcombe").map((b) => b.rate_false)))}** with negatively correlated arms)`,
    );
    expect(figures).toContain(`coverage ≥ ${pc(Math.min(...bet.map((b) => b.coverage)))}`);
    const same = get("null-identical", "betting");
    expect(figures).toContain(`identical arms ruled out in **${same.mean_pairs} pairs, ${Math.round((100 * same.ruled_out_30) / same.tests)}%**`);
    const [w, e] = [get("null-shift", "betting", "weak"), get("null-shift", "betting", "exfil")];
    expect(figures).toContain(
      `ruled out within 30 pairs in ${pc(w.ruled_out_30 / w.tests)} and ${pc(e.ruled_out_30 / e.tests)} (no valid 5% test can beyond ${pc(w.fixed_n_bound_30!)} and ${pc(e.fixed_n_bound_30!)} there)`,
    );
    const power = get("power-25%", "betting");
    expect(figures).toContain(
      `25% follow found in **${pc(power.rate_causal)}**, **mean ${power.mean_pairs} pairs** (Newcombe ${get("power-25%", "newcombe").mean_pairs})`,
    );
    expect(power.rate_causal).toBeGreaterThanOrEqual(0.99); // the target
    expect(power.mean_pairs).toBeLessThanOrEqual(30);
    // Find the cause itself on nulls: every blame is false, at most alpha
    const att = (kind: string) => cal.attribution_nulls.find((r) => r.null === kind && r.method === "betting")!;
    for (const r of cal.attribution_nulls) {
      expect(r.attributions).toBeGreaterThanOrEqual(2000);
      expect(r.rate_blamed).toBeLessThanOrEqual(0.05);
    }
    expect(figures).toContain(
      `Find the cause on nulls blamed an input in **${pc(att("reshuffle").rate_blamed)}** of ${att("reshuffle").attributions.toLocaleString("en-US")} attributions (reshuffled draws; ${att("identical").blamed ? pc(att("identical").rate_blamed) : "0%"} with identical arms)`,
    );
  });

  it("the stress run and the fresh-clone CI stages are their results files'", () => {
    const flat = (t: string) => t.replace(/\s+/g, " ");
    const stress = /^run 1: exit 0, (\d+) of (\d+) scenarios passed, \d+ reported, ([\d.]+) min$/m.exec(read("bench/results/2026-12-04-e2e-stress.md"))!;
    expect(flat(readme)).toContain(`\`--runs 1 --hogs 2\` on this 2-core machine: **${stress[1]} of ${stress[2]} scenarios passed** in ${stress[3]} min`);
    const ci = read("bench/results/2026-12-06-ci-fresh-clone-hogs.md");
    const stage = (name: string) => Math.round(Number(new RegExp(`^${name} +([\\d.]+)`, "m").exec(ci)![1]));
    const testing = flat(read("docs/testing.md"));
    for (const [name, label] of [
      ["typecheck", "typecheck"],
      ["lint", "lint"],
      ["unit", "unit"],
      ["browser", "browser"],
      ["install", "install"],
      ["e2e", "end-to-end"],
    ])
      expect(testing).toContain(`${label} ${stage(name)} s`);
    expect(testing).toContain(`the whole CI passed in ${/^== CI passed in (\d+) s/m.exec(ci)![1]} s`);
  });

  it("the demo's transcript in the README is what `causeway demo` prints", () => {
    const block = /`npm run demo` prints:\n\n```\n([\s\S]*?)\n```/.exec(readme)![1];
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cw-readme-demo-"));
    try {
      const r = spawnSync(process.execPath, [path.join(ROOT, "dist/cli.js"), "demo", "--out", "runs"], { cwd: dir, encoding: "utf8", maxBuffer: 16 << 20 });
      expect(r.status, r.stderr).toBe(0);
      const norm = (l: string) => l.trim().replace(/\s+/g, " ");
      const printed = new Set(r.stdout.split("\n").map(norm));
      // every line the README shows (the "…" elides lines) is printed, column padding aside
      const shown = block.split("\n").filter((l) => l.trim() !== "…");
      expect(shown.length).toBeGreaterThan(10);
      for (const l of shown) expect(printed.has(norm(l)), l).toBe(true);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it("says the benchmark's model is a simulation and what its truth means", () => {
    expect(figures).toMatch(/model is a \*\*simulation\*\*/);
    expect(figures).toContain('"removing this\ninput changes the harm rate in the simulator"');
  });

  it("Find the cause on the unmodified examples: each row is the newest results file's, the rest marked pending", () => {
    const file = fs
      .readdirSync(path.join(ROOT, "bench/results"))
      .filter((f) => f.endsWith("-unmodified.json"))
      .sort()
      .at(-1)!;
    const rows = results(file).rows as { example: string; model_calls: number; program_runs: number; wall_s: number; causes: string[] }[];
    const lines = unmodified.split("\n").filter((l) => /^\| `(node|test\/node22\/\S+) examples\//.test(l));
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
