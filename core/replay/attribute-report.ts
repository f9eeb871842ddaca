/**
 * What Find the cause says at the end, from its state alone: each suspect's verdict (ruled out,
 * inconclusive) and the one-line summary.
 */
import { pct, signed } from "../util/numbers";
import type { TestResult } from "./test-record";
import type { AttributionState } from "./attribute-phases";
import type { ChainHop, Phase } from "./attribute-types";

/** The ran phases' suspects that their own test (or the last group test that removed them) ruled out, or left inconclusive. */
export function verdictLists(tests: readonly TestResult[], phases: readonly Phase[]): { ruledOut: string[]; inconclusive: string[] } {
  // what each suspect's own test said
  const single = new Map<string, TestResult>();
  for (const t of tests) if (!t.group && !t.baseline && t.phase !== "chain") single.set(t.intervention, t);
  const ruledOut: string[] = [];
  const inconclusive: string[] = [];
  for (const ph of phases.filter((p) => p.ran)) {
    for (const s of ph.suspects) {
      // without a test of its own: what the last group test that removed it (with nothing put back) said
      const g = tests.filter((t) => t.phase === ph.name && !t.baseline && t.group?.includes(s)).pop();
      const v = single.get(s)?.verdict ?? (g && g.verdict !== "causal" ? g.verdict : undefined);
      if (v === "ruled-out") ruledOut.push(s);
      else if (v === "inconclusive") inconclusive.push(s);
    }
  }
  return { ruledOut, inconclusive };
}

/** The chain in words: `a → b → c → target`. */
export function chainLine(chain: readonly ChainHop[]): string {
  return chain.length ? [chain[0].from, ...chain.map((h) => h.to)].join(" → ") : "";
}

/** The one-line summary of the attribution. */
export function summarize(st: AttributionState, chain: readonly ChainHop[] | undefined): string {
  const { causes, joint, groups, plan } = st;
  const phases = plan.phases;
  const group = groups[0] ?? null;
  const m = phases.filter((p) => p.ran).reduce((s, p) => s + p.suspects.length, 0);
  const firstPhase = phases[0];
  let summary: string;
  if (!group) summary = "stopped by the model-call budget before the first test finished";
  else if (causes.length || joint.length) {
    summary = causes.map((c) => `${c.role} cause ${c.spec} (${signed(c.effect)})`).join("; ") || "the suspects matter only together";
    if (joint.length) summary += "; joint (each enough alone): " + joint.map((j) => j.join(" + ")).join(", ");
    const last = groups[groups.length - 1];
    if (last.p_without >= 0.2)
      summary += `; the action still happens in ${pct(last.p_without)} of replays without ${last.group ? "any of them" : last.intervention}`;
    const later = phases.filter((p) => p.ran && p !== firstPhase);
    if (later.length)
      summary += ` (found among the ${later.map((p) => `${p.name} ${p.name === "channels" ? "" : "inputs"}`.trim()).join(" and ")}: the ${firstPhase.name} ${firstPhase.name === "given" ? "suspects" : "inputs"} did not explain it)`;
    if (chain?.length) summary += `; through the handoffs ${chainLine(chain)}`;
  } else if (groups.some((g) => g.verdict === "causal")) {
    const g = groups.find((x) => x.verdict === "causal")!;
    summary = `removing the ${g.group ? g.group.length + " suspects together" : g.intervention} matters (${signed(g.effect)} [${signed(g.ci[0])}, ${signed(g.ci[1])}]), but no single suspect was confirmed within n_max: nothing is blamed; more pairs (--n-max) would narrow it down`;
  } else if (group.verdict === "ruled-out" || (group.p_with > 0 && group.p_without >= group.p_with - 0.05)) {
    summary = `none of the ${m} suspect${m === 1 ? "" : "s"} explains it: the action happens in ${pct(group.p_with)} of replays with them and ${pct(group.p_without)} without any of them`;
  } else {
    summary = `inconclusive: removing all ${firstPhase.suspects.length} ${firstPhase.name} suspect${firstPhase.suspects.length === 1 ? "" : "s"} gave ${signed(group.effect)} [${signed(group.ci[0])}, ${signed(group.ci[1])}]`;
  }
  if (st.stopped === "budget") summary += ` (stopped by the model-call budget of ${st.opts.maxCalls ?? st.ctx.budget.max} calls: results so far)`;
  return summary;
}
