/**
 * Find the cause never ends at a suspect that merely carried an earlier agent's words. After the
 * phases, for each cause (betting):
 * - upward: while it carries an earlier agent's words (a message, or an input whose text carries
 *   an earlier output), the sending agent's suspects are tested, likeliest first, each a child of
 *   the carrier's causal test at an equal share of its alpha; the first causal one is the next hop;
 * - downward: from the root, the recorded handoffs on its path to the action, when one of them was
 *   found in a prompt's text, are tested in turn, each a child of the test before it at the same
 *   alpha (one child per node), and the chain holds only when every hop is causal.
 * An earlier test of the same suspect in this attribution is reused, not run again. `causes` then
 * names the root inputs only (docs/statistics.md, "Handoff chains").
 */
import { BudgetExceeded } from "./context";
import type { TestResult } from "./test-record";
import { causeOf, runOne, type AttributionState } from "./attribute-phases";
import type { HandoffMap } from "./handoff-map";
import type { ChainHop } from "./attribute-types";

/** The latest test of `spec` alone (nothing put back) in this attribution. */
function singleTest(st: AttributionState, spec: string): TestResult | undefined {
  return st.tests.filter((t) => !t.group && !t.baseline && t.intervention === spec).pop();
}

/** One chain test at `alpha`: a child of the causal test it continues. */
function chainTest(st: AttributionState, spec: string, alpha: number): Promise<TestResult> {
  st.current = { name: "chain", alpha, family: 1 };
  return runOne(st, [spec], undefined, alpha);
}

type Node = [spec: string, test: TestResult];

/** Upward from a causal carrier: the chain of carriers back to the suspect the words came from. */
async function upward(st: AttributionState, map: HandoffMap, start: Node, alpha: number): Promise<Node[]> {
  const nodes: Node[] = [start];
  for (let slot = alpha; ;) {
    const ups = map.upstream(nodes[0][0])?.filter((u) => !nodes.some(([n]) => n === u));
    if (!ups?.length) return nodes;
    // each upstream suspect has an equal slot of the carrier's alpha, fixed before any of them runs
    const each = slot / ups.length;
    let next: Node | undefined;
    for (const u of ups) {
      const r = singleTest(st, u) ?? (await chainTest(st, u, each));
      if (r.verdict === "causal") {
        next = [u, r];
        break;
      }
    }
    if (!next) return nodes;
    nodes.unshift(next);
    slot = each;
  }
}

/**
 * Downward from `from`: the handoffs to the action, each confirmed by a causal test (new ones at
 * `alpha`; with null, only earlier tests count). Undefined when one is not causal.
 */
async function downward(st: AttributionState, map: HandoffMap, from: string, alpha: number | null, upper: Node[]): Promise<Node[] | undefined> {
  const specs = (map.downstream(from) ?? []).filter((s) => !upper.some(([n]) => n === s));
  const out: Node[] = [];
  for (const s of specs) {
    const r = singleTest(st, s) ?? (alpha === null ? undefined : await chainTest(st, s, alpha));
    if (r?.verdict !== "causal") return undefined;
    out.push([s, r]);
  }
  return out;
}

/** The chain of one cause, root → action, or undefined when no handoff lies on its way. */
async function chainOf(st: AttributionState, map: HandoffMap, spec: string, test: TestResult): Promise<Node[] | undefined> {
  const alpha = st.chainAlpha.get(spec) ?? test.alpha ?? st.plan.alpha;
  const up = await upward(st, map, [spec, test], alpha);
  // a carrier's alpha went to the suspects above it: below it only earlier tests count
  const carrier = up.length > 1 || !!map.upstream(spec);
  const down = await downward(st, map, spec, carrier ? null : alpha, up);
  const nodes = [...up, ...(down ?? [])];
  return nodes.length > 1 ? nodes : undefined;
}

/**
 * Follows every cause's handoffs (betting) and rewrites `causes` to name root inputs only. Returns
 * the primary (first) cause's chain as hops, root → action, or undefined.
 */
export async function followChains(st: AttributionState, map: HandoffMap): Promise<ChainHop[] | undefined> {
  const chains: Node[][] = [];
  try {
    for (const c of [...st.causes]) {
      const t = st.causeTests.get(c.spec);
      if (!t) continue;
      const nodes = await chainOf(st, map, c.spec, t);
      if (nodes) chains.push(nodes);
    }
  } catch (err) {
    if (!(err instanceof BudgetExceeded)) throw err;
    st.stopped = "budget";
  }
  if (!chains.length) return undefined;
  // causes: the roots, never a suspect that only carried a root's words
  const carriers = new Set(chains.flatMap((n) => n.slice(1).map(([s]) => s)));
  const roots = chains.map((n) => n[0]);
  const causes = st.causes.filter((c) => !carriers.has(c.spec));
  for (const [s, r] of roots) if (!causes.some((c) => c.spec === s) && !carriers.has(s)) causes.push(causeOf(s, r));
  st.causes.splice(0, st.causes.length, ...causes);
  const main = chains[0];
  return main.map(([from, test], i) => ({ from, to: i + 1 < main.length ? main[i + 1][0] : st.opts.target, test }));
}
