/**
 * Find the cause: the whole investigation of one action, like git bisect for agent incidents.
 *
 *  1. Remove every suspect at once (default: the untrusted inputs upstream of the action). If the
 *     action still happens about as often, none of them is the reason; one test answers that.
 *  2. Otherwise narrow down: test the suspects one by one (with more than four, halve the group).
 *  3. Classify each cause by its interval: primary (confidently explains at least half of the
 *     occurrences), contributing (confidently less than half), confirmed (causal, share unclear).
 *     When the group matters and no single member does, each member is enough on its own: they are
 *     joint (redundant) causes; leave-one-in tests say which members really are.
 *
 * All tests share one "nothing removed" arm, and every interval is corrected for every test the
 * attribution may run, so the whole attribution keeps a 5% false-positive rate.
 *
 * With the default paired betting method (docs/statistics.md) the suspects are ranked by the
 * recorded evidence (an argument value found in the input, weighted by how few sources held it;
 * wording the next output reused; a short path to the action) and tested likeliest first, in
 * phases: the untrusted inputs; when they do not explain the action, the trusted inputs; when every
 * input group was ruled out, the channels (messages) on the way. When the evidence singles out one
 * suspect of a phase (the only one that alone held an argument value), it is tested alone first,
 * and after a causal verdict the others together. The error rate 0.05 is spent across phases
 * (weights 7 : 2 : 1 over the non-empty phases, fixed from the recording before any replay) and
 * within a phase by a tree (a test runs only below a causal one, children's alphas sum to at most
 * their parent's; the lead's tree ¾ of the phase's, the group's the rest), so the probability of
 * any false blame stays ≤ 0.05. Nothing is blamed without a replay test.
 * `--method newcombe` keeps the reference's procedure (untrusted inputs only, one phase).
 */
import { randomBytes } from "node:crypto";
import { appendTest } from "../log/testslog";
import { Budget, BudgetExceeded, type ReplayContext } from "./context";
import { planAttribution } from "./attribute-plan";
import { newState, runPhase, type AttributionState } from "./attribute-phases";
import { summarize, verdictLists } from "./attribute-report";
import { followChains } from "./attribute-chain";
import { predictLeads } from "./surrogate";
import type { AttributeOptions, Attribution } from "./attribute-types";

/** The phases in order, until one explains the action, the budget runs out, or (channels) an input group mattered. */
async function runPhases(st: AttributionState): Promise<void> {
  for (const ph of st.plan.phases) {
    if (!ph.suspects.length) continue;
    // channels only carry what inputs put in them: test them only when every input group was ruled out
    if (ph.name === "channels" && (st.causes.length || st.joint.length || st.groups.some((g) => g.verdict !== "ruled-out"))) break;
    st.current = ph;
    ph.ran = true;
    const r = await runPhase(st, ph);
    st.groups.push(r.group);
    st.causes.push(...r.causes);
    st.joint.push(...r.joint);
    if (r.explained || st.stopped === "budget") break;
  }
}

export async function attribute(ctx: ReplayContext, opts: AttributeOptions): Promise<Attribution> {
  // the plan, fixed from the recording before any replay
  const plan = planAttribution(ctx, opts);
  if (opts.maxCalls !== undefined) ctx.budget = new Budget(opts.maxCalls);
  const st = newState(ctx, opts, plan);
  try {
    if (opts.rankBlocks && plan.method === "betting")
      await predictLeads(ctx, plan.phases, { target: opts.target, k: opts.rankBlocks, seedBase: opts.seedBase, signal: opts.signal });
    await runPhases(st);
  } catch (err) {
    if (!(err instanceof BudgetExceeded)) throw err;
    st.stopped = "budget";
  }
  // a cause that carried an earlier agent's words is followed back to where they came from
  const chain = plan.handoffs && st.stopped !== "budget" ? await followChains(st, plan.handoffs) : undefined;
  const { phases, method } = plan;
  const { ruledOut, inconclusive } = verdictLists(st.tests, phases);
  const id = randomBytes(6).toString("hex");
  // the case file reads the chain back from tests.jsonl: each hop's test is marked with its place in it
  const hopOf = new Map(chain?.map((h, index) => [h.test, { index, from: h.from, to: h.to }]));
  // and so are the suspects this replay could not test (rung 1: not in the one call re-sent), on each line of the attribution
  const notTested = plan.notTested?.length ? { attribution_not_tested: plan.notTested } : {};
  if (opts.save !== false)
    for (const t of st.tests) appendTest(ctx.run.dir, { ...t, attribution: id, ...notTested, ...(hopOf.has(t) ? { chain_hop: hopOf.get(t) } : {}) });
  const last = st.groups[st.groups.length - 1] ?? null;
  const res: Attribution = {
    target: opts.target,
    // the phases' suspects, and those the chain tested on the way back to a root
    suspects: [...new Set([...phases.filter((p) => p.ran).flatMap((p) => p.suspects), ...(chain ?? []).map((h) => h.from)])],
    group: st.groups[0] ?? null,
    tests: st.tests,
    causes: st.causes,
    joint: st.joint,
    ruled_out: ruledOut,
    inconclusive,
    explained: last && last.verdict === "causal" ? last.effect : 0,
    unprompted_rate: last ? last.p_without : null,
    family: phases.reduce((sum, p) => sum + (p.ran ? p.family : 0), 0),
    model_calls: ctx.counts.made - st.before.made,
    naive_model_calls: ctx.counts.naive - st.before.naive,
    program_runs: st.tests.reduce((s, t) => s + t.program_runs, 0),
    stopped: st.stopped,
    summary: summarize(st, chain) + (plan.notTested?.length ? `; not tested at rung ${ctx.rung}: ${plan.notTested.map((n) => n.spec).join(", ")}` : ""),
    attribution_id: id,
    method,
    rung: ctx.rung,
    ...(plan.notTested?.length ? { not_tested: plan.notTested } : {}),
  };
  if (method === "betting") {
    res.phases = phases;
    if (plan.evidence) res.evidence = plan.evidence;
    if (chain) res.chain = chain;
  }
  return res;
}
