/**
 * Is that really why: the tests recorded against a run (tests.jsonl) read into summaries, their
 * roles and settled verdicts, the run-scope tests indexed by the calls they name, and the
 * influence matrix of interventions by targets.
 */
import { safeText } from "../log/sanitize";
import type { TestRecord } from "../log/testslog";
import { nodesMatching, targetHits, type Graph } from "../graph/graph";
import type { RunModel } from "../graph/model";
import { roleFor } from "../stats/verdicts";
import { howTested } from "./tested";
import type { CandidateStatus, Matrix, TestSummary } from "./types";

export function testSummary(t: TestRecord): TestSummary {
  const num = (x: unknown) => (typeof x === "number" && Number.isFinite(x) ? x : null);
  const ci = Array.isArray(t.ci) && t.ci.length === 2 ? ([num(t.ci[0]) ?? 0, num(t.ci[1]) ?? 0] as [number, number]) : ([0, 0] as [number, number]);
  return {
    intervention: safeText(t.intervention ?? ""),
    target: safeText(t.target ?? ""),
    n: num(t.n) ?? 0,
    p_with: num(t.p_with),
    p_without: num(t.p_without),
    effect: num(t.effect) ?? 0,
    ci,
    verdict: safeText(t.verdict ?? "inconclusive"),
    role: typeof t.role === "string" ? t.role : null,
    p_value: num(t.p_value),
    looks: typeof t.looks === "number" ? t.looks : undefined,
    stopped: typeof t.stopped === "string" ? t.stopped : undefined,
    n_needed: num(t.n_needed),
    scope: typeof t.scope === "string" ? t.scope : "run",
    line: t.line,
    chained: t.chained,
    group: Array.isArray(t.group)
      ? t.group.map((g) => safeText(g))
      : safeText(t.intervention ?? "").includes(" | ")
        ? safeText(t.intervention).split(" | ")
        : undefined,
    ...(t.by !== undefined ? { by: safeText(t.by) } : {}),
    ...(t.foreign ? { foreign: true } : {}),
    ...((typeof t.baseline === "string" && t.baseline) || (Array.isArray(t.baseline) && t.baseline.length) ? { baseline: true } : {}),
    ...howTested(t),
  };
}

/** The role of a causal test: its recorded role, or one judged from its interval. */
export function causalRole(t: TestSummary): "primary" | "contributing" | "confirmed" {
  const r = t.role === "cause" ? "confirmed" : t.role;
  if (r === "primary" || r === "contributing" || r === "confirmed") return r;
  return roleFor(t.ci, t.p_with ?? 0);
}

/** ruled-out or inconclusive (no-effect-seen when a sequential test stopped for futility). */
export function settled(t: TestSummary): CandidateStatus {
  if (t.verdict === "inconclusive" && t.stopped === "futility") return "no-effect-seen";
  if (t.verdict === "ruled-out" || t.verdict === "inconclusive") return t.verdict;
  const [lo, hi] = t.ci;
  return hi < 0.2 && lo > -0.2 ? "ruled-out" : "inconclusive";
}

/** Run-scope tests, with the set of action ids each one's target matched. */
export class TestIndex {
  readonly runTests: { t: TestSummary; hits: Set<string> }[] = [];
  private matched = new Map<string, Set<string>>();
  constructor(
    private m: RunModel,
    private g: Graph,
  ) {
    const hitCache = new Map<string, Set<string>>();
    for (const rec of m.run.tests) {
      const t = testSummary(rec);
      if ((t.scope ?? "run") !== "run") continue;
      let hits = hitCache.get(t.target);
      if (!hits) {
        hits = new Set(targetHits(m, t.target).map((a) => a.id));
        hitCache.set(t.target, hits);
      }
      this.runTests.push({ t, hits });
    }
  }
  nodesOf(spec: string): Set<string> {
    let s = this.matched.get(spec);
    if (!s) {
      s = new Set(nodesMatching(this.m, this.g, spec));
      this.matched.set(spec, s);
    }
    return s;
  }
}

export function matrixOf(tests: TestSummary[]): Matrix {
  const rows: string[] = [];
  const cols: string[] = [];
  const cells: Record<string, TestSummary> = {};
  for (const t of tests) {
    if ((t.scope ?? "run") !== "run") continue;
    if (!rows.includes(t.intervention)) rows.push(t.intervention);
    if (!cols.includes(t.target)) cols.push(t.target);
    cells[`${t.intervention}||${t.target}`] = t;
  }
  return { rows, cols, cells };
}
