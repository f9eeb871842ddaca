/**
 * How a test was run and, for Find the cause, the chain of hops it followed, read from untrusted
 * records: a tests.jsonl line, or a job's result on its way to the investigator. Each reader keeps
 * only well-formed values (bounded text, known rungs, whole counts) and leaves anything else out,
 * so an old run (without these fields) and a damaged one show exactly what they showed before.
 */
import type { ChainHop, HowTested } from "./types";

/** Assumptions kept per test, and characters per assumption. */
export const ASSUMPTIONS_MAX = 12;
export const ASSUMPTION_CHARS = 400;
/** Hops kept per chain, and characters per suspect id. */
export const CHAIN_MAX = 32;
const ID_CHARS = 1000;

const clip = (x: string, max: number) => (x.length > max ? `${x.slice(0, max)}…` : x);
const finite = (x: unknown): x is number => typeof x === "number" && Number.isFinite(x);

/**
 * The rung (1 one recorded call re-sent, 2 agentless re-simulation from the recorded requests,
 * 3 the program re-run), the assumptions in plain sentences, and the actions the replays took
 * that the recording never made.
 */
export function howTested(t: Record<string, unknown>): HowTested {
  const out: HowTested = {};
  if (t.rung === 1 || t.rung === 2 || t.rung === 3) out.rung = t.rung;
  if (Array.isArray(t.assumptions)) {
    const a = t.assumptions.filter((x): x is string => typeof x === "string" && x.trim() !== "").slice(0, ASSUMPTIONS_MAX);
    out.assumptions = a.map((x) => clip(x, ASSUMPTION_CHARS));
  }
  if (typeof t.off_tape_actions === "number" && Number.isInteger(t.off_tape_actions) && t.off_tape_actions >= 0) out.off_tape_actions = t.off_tape_actions;
  return out;
}

/**
 * An attribution's `chain` (ordered root → action), or undefined when there is none or it is not a
 * list. A hop without text ids or a test with a verdict is dropped; at most {@link CHAIN_MAX} kept.
 */
export function chainOf(x: unknown): ChainHop[] | undefined {
  if (!Array.isArray(x)) return undefined;
  const out: ChainHop[] = [];
  for (const h of x.slice(0, CHAIN_MAX)) {
    if (!h || typeof h !== "object") continue;
    const o = h as Record<string, unknown>;
    const t = (o.test && typeof o.test === "object" ? o.test : null) as Record<string, unknown> | null;
    if (typeof o.from !== "string" || !o.from || typeof o.to !== "string" || !o.to || !t || typeof t.verdict !== "string") continue;
    const ci = Array.isArray(t.ci) && t.ci.length === 2 && finite(t.ci[0]) && finite(t.ci[1]) ? ([t.ci[0], t.ci[1]] as [number, number]) : undefined;
    out.push({
      from: clip(o.from, ID_CHARS),
      to: clip(o.to, ID_CHARS),
      test: {
        verdict: clip(t.verdict, 40),
        ...(typeof t.role === "string" ? { role: clip(t.role, 40) } : {}),
        ...(finite(t.effect) ? { effect: t.effect } : {}),
        ...(ci ? { ci } : {}),
        ...(typeof t.n === "number" && Number.isInteger(t.n) && t.n >= 0 ? { n: t.n } : {}),
        ...howTested(t),
      },
    });
  }
  return out;
}

/** Suspects kept per not-tested list, and characters per reason. */
export const NOT_TESTED_MAX = 50;
const REASON_CHARS = 400;

/**
 * The suspects an attribution could not test (rung 1: not in the one call re-sent), each with why:
 * its `not_tested`, or a tests.jsonl line's `attribution_not_tested`. Entries that are not a text
 * spec and reason are dropped; undefined when none is left.
 */
export function notTestedOf(x: unknown): { spec: string; reason: string }[] | undefined {
  if (!Array.isArray(x)) return undefined;
  const out: { spec: string; reason: string }[] = [];
  for (const e of x) {
    if (out.length >= NOT_TESTED_MAX) break;
    if (!e || typeof e !== "object") continue;
    const { spec, reason } = e as Record<string, unknown>;
    if (typeof spec !== "string" || !spec.trim() || typeof reason !== "string") continue;
    out.push({ spec: clip(spec, ID_CHARS), reason: clip(reason, REASON_CHARS) });
  }
  return out.length ? out : undefined;
}
