/**
 * The real-model benchmark's results document, its Markdown (the reference's table shape: harmful
 * runs attributed, named exactly the true cause, false blames; where the ground truth confirms
 * the planted document drives the harm, apart from where it does not, beside the baselines) and
 * its file, dated and never overwriting another.
 */
import fs from "node:fs";
import path from "node:path";
import type { ClientCounts } from "./real-client";
import type { RealScenarioResult } from "./real-harness";
import type { Estimate } from "./real-options";

export interface Group {
  scenarios: string[];
  harmful_runs: number;
  attributed: number;
  exact: number;
  false_blames: number;
  inconclusive: number;
  reach: { exact: number; false_blames: number; abstained: number };
  provenance: { exact: number; false_blames: number; abstained: number };
  reuse: { exact: number; false_blames: number; abstained: number };
  model_calls_per_attribution: { min: number; max: number; mean: number };
}

export interface RealResult {
  benchmark: "attribution, real model";
  date: string;
  command: string;
  model: string;
  endpoint: { api: string; where: "local" | "hosted" };
  settings: {
    runs: number;
    truth_n: number;
    n: number;
    n_max: number;
    method: string;
    workers: number;
    replay: string;
    temperature: number | null;
    pairs: string;
    caps: { max_calls: number | null; max_usd: number | null; price: { input: number; output: number } | null };
  };
  estimate: Estimate;
  /** null when everything finished; otherwise what stopped it. */
  stopped: null | { by: "cap"; reason: string; unfinished: string[]; not_started: string[] };
  /** Scored: scenarios whose ground truth confirms the planted document drives the harm. */
  confirmed: Group;
  /** Reported apart, never scored as hits or misses: the ground truth does not confirm it. */
  unconfirmed: Group;
  control: { scenarios: string[]; runs: number; high_alerts: number };
  scenarios: RealScenarioResult[];
  model_calls: ClientCounts;
  wall_s: number;
  node: string;
}

export function group(rows: RealScenarioResult[]): Group {
  const per = rows.flatMap((r) => r.attributions.filter((a) => !a.error).map((a) => a.model_calls));
  const sum = (f: (r: RealScenarioResult) => number) => rows.reduce((k, r) => k + f(r), 0);
  const base = (m: "reach" | "provenance" | "reuse") => ({
    exact: sum((r) => r.baselines[m].exact),
    false_blames: sum((r) => r.baselines[m].false_blames),
    abstained: sum((r) => r.baselines[m].abstained),
  });
  return {
    scenarios: rows.map((r) => r.name),
    harmful_runs: sum((r) => r.harmful_runs),
    attributed: sum((r) => r.attributed),
    exact: sum((r) => r.exact),
    false_blames: sum((r) => r.false_blames),
    inconclusive: sum((r) => r.inconclusive),
    reach: base("reach"),
    provenance: base("provenance"),
    reuse: base("reuse"),
    model_calls_per_attribution: {
      min: per.length ? Math.min(...per) : 0,
      max: per.length ? Math.max(...per) : 0,
      mean: per.length ? Math.round((per.reduce((a, b) => a + b, 0) / per.length) * 10) / 10 : 0,
    },
  };
}

const list = (g: Group) => (g.scenarios.length ? g.scenarios.join(", ") : "none");

const REPLAY: Record<string, string> = {
  agentless: "agentless replay (rung 2: the agents' recorded requests re-sent, edited, to the same endpoint; no program)",
  program: "program replay (rung 3: the scenario's program re-run)",
};

export function markdown(r: RealResult): string {
  const L: string[] = [];
  L.push(`# Attribution benchmark, real model: ${r.model}, ${r.date}`, "");
  L.push(`Command: \`${r.command}\``, "");
  L.push(
    `Endpoint: ${r.endpoint.api}, ${r.endpoint.where}. ${r.settings.runs} runs per scenario; ground truth from ${r.settings.truth_n} runs with and ${r.settings.truth_n} without the planted document; Find the cause with n = ${r.settings.n}, n_max = ${r.settings.n_max}, ${r.settings.method}, ${REPLAY[r.settings.replay] ?? `${r.settings.replay} replay`}, tools from the tape. ${r.settings.pairs}`,
    "",
  );
  const fellBack = r.scenarios.flatMap((s) =>
    s.attributions.filter((a) => a.replay !== r.settings.replay).map((a) => `${a.run} (${a.replay}${a.replay_note ? `: ${a.replay_note}` : ""})`),
  );
  if (fellBack.length) L.push(`Replayed otherwise: ${fellBack.join("; ")}.`, "");
  if (r.stopped)
    L.push(
      `**Stopped by the cap (${r.stopped.reason})**: unfinished ${r.stopped.unfinished.join(", ") || "none"}; not started ${r.stopped.not_started.join(", ") || "none"}. Everything below is what finished.`,
      "",
    );
  const c = r.confirmed;
  const u = r.unconfirmed;
  const all = { attributed: c.attributed + u.attributed };
  const calls = (g: Group) => {
    const m = g.model_calls_per_attribution;
    return !g.attributed ? "–" : m.min === m.max ? String(m.min) : `${m.min}–${m.max}`;
  };
  L.push("| | Harmful runs attributed | Causeway named exactly the true cause | False blames | Model calls per attribution |");
  L.push("|---|---|---|---|---|");
  L.push(
    `| Where the ground-truth check confirms the planted document drives the harm (${list(c)}) | ${c.attributed} | ${c.exact} of ${c.attributed}${c.inconclusive ? `, ${c.inconclusive} inconclusive` : ""} | ${c.false_blames} | ${calls(c)} |`,
  );
  L.push(
    `| Where it does not (${list(u)}), reported apart | ${u.attributed} | ${u.exact}${u.inconclusive ? `, plus ${u.inconclusive} inconclusive` : ""} | ${u.false_blames} | ${calls(u)} |`,
  );
  const b = (m: "reach" | "provenance" | "reuse") => c[m].exact + u[m].exact;
  const ab = (m: "reach" | "provenance" | "reuse") => c[m].abstained + u[m].abstained;
  const fb = (m: "reach" | "provenance" | "reuse") => c[m].false_blames + u[m].false_blames;
  L.push(`| Tracing alone (reach) | ${all.attributed} | ${b("reach")} | ${fb("reach")} | 0 |`);
  L.push(`| String matching (provenance) | ${all.attributed} | ${b("provenance")}, abstains on ${ab("provenance")} | ${fb("provenance")} | 0 |`);
  L.push(`| Wording reuse | ${all.attributed} | ${b("reuse")}, abstains on ${ab("reuse")} | ${fb("reuse")} | 0 |`);
  L.push("", `Control (${r.control.scenarios.join(", ") || "not run"}): ${r.control.high_alerts} high alerts in ${r.control.runs} runs.`, "");
  L.push(
    "| scenario | ground truth: harm with / without the planted document | harmful runs | exact | false blames | inconclusive | reach / provenance / reuse exact | model calls: record, ground truth, attribution mean (max) | wall s |",
  );
  L.push("|---|---|---|---|---|---|---|---|---|");
  for (const s of r.scenarios) {
    const g = s.ground_truth;
    const gt = s.truth.length
      ? `${g.verdict}: ${g.with.harmful}/${g.with.runs} vs ${g.without.harmful}/${g.without.runs} (${g.effect >= 0 ? "+" : ""}${g.effect.toFixed(2)}, CI ${g.ci[0].toFixed(2)}…${g.ci[1].toFixed(2)})`
      : "control";
    const a = s.model_calls.attribution;
    L.push(
      `| ${s.name}${s.hard ? " (harder)" : ""}${s.finished ? "" : " (unfinished)"} | ${gt} | ${s.harmful_runs} of ${s.runs} | ${s.exact}/${s.attributed} | ${s.false_blames} | ${s.inconclusive} | ${s.baselines.reach.exact} / ${s.baselines.provenance.exact} / ${s.baselines.reuse.exact} | ${s.model_calls.record}, ${s.model_calls.ground_truth}, ${a.mean} (${a.max}) | ${s.wall_s.toFixed(1)} |`,
    );
  }
  const m = r.model_calls;
  const errs =
    Object.entries(m.errors)
      .map(([k, v]) => `${k}: ${v}`)
      .join(", ") || "none";
  L.push(
    "",
    `Model calls: **${m.calls}** (estimate beforehand: ${r.estimate.calls.expected} expected, at most ${r.estimate.calls.max}); tokens ${m.input_tokens} in, ${m.output_tokens} out${m.usd !== null ? `; $${m.usd.toFixed(4)}` : ""}. Failed calls: ${errs}. Free-text replies where a tool call was wanted: ${m.free_text}; tool calls read from text: ${m.calls_from_text}; odd tool calls dropped: ${m.odd_tool_calls}. Wall time ${r.wall_s.toFixed(1)} s (Node ${r.node}).`,
  );
  return L.join("\n") + "\n";
}

/** A short table for the terminal. */
export function table(r: RealResult): string {
  const L = markdown(r)
    .split("\n")
    .filter((l) => !l.startsWith("# ") && !l.startsWith("Command:"));
  return L.join("\n").trim();
}

const slug = (s: string) =>
  s
    .replace(/[^A-Za-z0-9._-]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .toLowerCase()
    .slice(0, 60) || "model";

/**
 * Writes `<dir>/<date>-real-<model>[-k].json` and `.md`, the first k that names no existing file
 * (created exclusively: a file already there is never overwritten). Returns the JSON file's path.
 */
export function writeRealResult(dir: string, r: RealResult): string {
  fs.mkdirSync(dir, { recursive: true });
  const stem = `${r.date}-real-${slug(r.model)}`;
  for (let k = 1; k < 10_000; k++) {
    const base = path.join(dir, k === 1 ? stem : `${stem}-${k}`);
    if (fs.existsSync(base + ".md")) continue;
    let fd: number;
    try {
      fd = fs.openSync(base + ".json", "wx");
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "EEXIST") continue;
      throw err;
    }
    fs.writeSync(fd, JSON.stringify(r, null, 1) + "\n");
    fs.closeSync(fd);
    fs.writeFileSync(base + ".md", markdown(r), { flag: "wx" });
    return base + ".json";
  }
  throw new Error(`no free results file name for ${stem} in ${dir}`);
}
