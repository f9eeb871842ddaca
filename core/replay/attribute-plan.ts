/**
 * The plan of Find the cause, fixed from the recording before any replay: the suspects, the
 * evidence they were ranked by, the phases and the share of the error rate each phase may spend
 * (docs/statistics.md). Nothing here runs a replay.
 */
import { ReplayError, type ReplayContext } from "./context";
import type { TestMethod } from "./test-record";
import { defaultSuspects, leadSuspect, rankedSuspects } from "./suspects";
import { HandoffMap } from "./handoff-map";
import { Refusal } from "./preflight";
import type { AttributeOptions, Phase, SuspectEvidence } from "./attribute-types";

/** Betting: the share of a causal group's alpha kept for the "enough on its own" (joint) tests below it. */
export const JOINT_SHARE = 0.25;

/**
 * Betting: the share of a phase's alpha its lead suspect's test starts with (the tests after a causal
 * lead share it); the rest is for the group test and narrowing when the lead is not causal.
 */
export const LEAD_SHARE = 0.75;

/** Betting: the lead suspect's test may run to this multiple of n_max before it is cut for lack of pairs. */
export const LEAD_N_MAX_FACTOR = 2;

/** Betting: the share of a causal lead's alpha kept for its handoff chain when the others' group test shares it. */
export const CHAIN_SHARE = 0.5;

/** The reference's family size for m suspects: the group, the narrowing tests, the sufficiency tests. */
export const familyOf = (m: number) => (m === 1 ? 1 : 1 + (m <= 4 ? m : 2 * m - 2) + m);

export interface AttributionPlan {
  method: TestMethod;
  /** Family-wise error rate of the whole attribution. */
  alpha: number;
  minEffect: number;
  phases: Phase[];
  /** Betting with default suspects: the evidence each was ranked by. */
  evidence?: SuspectEvidence[];
  /** Betting: the recorded handoffs between agents, for the chain of a cause. */
  handoffs?: HandoffMap;
  /** Suspects the replay can't test (rung 1: not in the one re-sent call), and why. */
  notTested?: { spec: string; reason: string }[];
}

/** A System that can't test every suspect (rung 1) says why for one it can't. */
function untestableOf(ctx: ReplayContext): ((spec: string) => string | undefined) | undefined {
  const sys = ctx.system as { untestable?: unknown };
  return typeof sys.untestable === "function" ? (spec) => (sys.untestable as (s: string) => string | undefined).call(ctx.system, spec) : undefined;
}

/** Drops from the phases what the replay can't test; returns those, with why. */
function dropUntestable(ctx: ReplayContext, phases: Phase[]): { spec: string; reason: string }[] {
  const why = untestableOf(ctx);
  if (!why) return [];
  const out: { spec: string; reason: string }[] = [];
  for (const ph of phases) {
    const keep = ph.suspects.filter((s) => {
      const reason = why(s);
      if (reason && !out.some((o) => o.spec === s)) out.push({ spec: s, reason });
      return !reason;
    });
    if (keep.length === ph.suspects.length) continue;
    ph.suspects = keep;
    ph.family = familyOf(Math.max(1, keep.length));
    if (ph.lead && !keep.includes(ph.lead)) delete ph.lead;
  }
  return out;
}

/** A phase's suspects, its lead (if the evidence singles one out) first. */
function phaseOf(name: Phase["name"], ev: SuspectEvidence[], alpha: number): Phase {
  // channels only carry what the inputs put in them: no lead among them
  const lead = name === "channels" ? undefined : leadSuspect(ev);
  const suspects = ev.map((e) => e.spec);
  if (lead) suspects.splice(0, suspects.length, lead, ...suspects.filter((s) => s !== lead));
  return { name, suspects, alpha, family: familyOf(Math.max(1, suspects.length)), ran: false, ...(lead ? { lead } : {}) };
}

/** Betting's default phases: untrusted, trusted, channels, alpha split 7 : 2 : 1 over the non-empty ones. */
function defaultPhases(ctx: ReplayContext, target: string, alpha: number): { phases: Phase[]; evidence: SuspectEvidence[] } {
  const u = rankedSuspects(ctx, target, "untrusted");
  const t = rankedSuspects(ctx, target, "trusted");
  const c = rankedSuspects(ctx, target, "channels");
  const shares: [Phase["name"], SuspectEvidence[], number][] = [
    ["untrusted", u, 7],
    ["trusted", t, 2],
    ["channels", c, 1],
  ];
  const live = shares.filter(([, l]) => l.length);
  const total = live.reduce((sum, [, , w]) => sum + w, 0);
  return { phases: live.map(([name, l, w]) => phaseOf(name, l, ((alpha * w) / total) * (1 - 1e-12))), evidence: [...u, ...t, ...c] };
}

/** The plan for one attribution; refuses one with no suspect at all. */
export function planAttribution(ctx: ReplayContext, opts: AttributeOptions): AttributionPlan {
  const method: TestMethod = opts.method ?? "betting";
  const alpha = opts.alpha ?? 0.05;
  const minEffect = opts.minEffect ?? 0.2;
  const given = [...new Set(opts.suspects ?? [])];
  let phases: Phase[];
  let evidence: SuspectEvidence[] | undefined;
  if (given.length) phases = [{ name: "given", suspects: given, alpha, family: familyOf(given.length), ran: false }];
  else if (method === "newcombe") {
    const sp = defaultSuspects(ctx, opts.target);
    phases = [{ name: "untrusted", suspects: sp, alpha, family: familyOf(Math.max(1, sp.length)), ran: false }];
  } else if (opts.suspectsMode === "all") {
    evidence = rankedSuspects(ctx, opts.target, "all");
    phases = [phaseOf("all", evidence, alpha)];
  } else ({ phases, evidence } = defaultPhases(ctx, opts.target, alpha));
  if (!phases.some((p) => p.suspects.length)) throw new ReplayError("no suspects: no input reached the action; pass --suspect to choose some");
  const notTested = dropUntestable(ctx, phases);
  if (!phases.some((p) => p.suspects.length)) {
    throw new Refusal(
      `no suspect can be tested by this replay (rung ${ctx.rung}): ${notTested.map((n) => `${n.spec} is ${n.reason}`).join("; ")}; nothing was sent`,
    );
  }
  // a chain's hops lie in other calls: only a replay of more than one call can test them
  const handoffs = method === "betting" && ctx.rung !== 1 ? new HandoffMap(ctx, opts.target) : undefined;
  return { method, alpha, minEffect, phases, ...(evidence ? { evidence } : {}), ...(handoffs ? { handoffs } : {}), ...(notTested.length ? { notTested } : {}) };
}
