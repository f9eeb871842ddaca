/**
 * The methods the benchmark compares, on the same recorded runs, and how they are scored.
 *
 *  reach       blame every untrusted input upstream of the action (what tracing alone gives you)
 *  provenance  blame the inputs that are the only untrusted source of an argument value (string
 *              matching); nothing found = abstain
 *  reuse       blame the untrusted input whose wording the next model output reused most (ties:
 *              all of them); no reuse at all = abstain
 *  causeway    Find the cause (core/replay/attribute.ts): the group test, then narrowing; blame the
 *              causes and the members of joint (redundant) causes
 *
 * "Exact" means the blamed set equals the ground truth; a false blame is a blamed input that is not
 * in it; an abstention is an empty blamed set.
 */
import type { RunData } from "causeway-vscode";
import { investigate } from "../core/analysis/investigate";
import type { Investigation } from "../core/analysis/types";
import { targetHits } from "../core/graph/graph";
import { RunModel } from "../core/graph/model";
import type { Attribution } from "../core/replay/attribute-types";

export const METHODS = ["reach", "provenance", "reuse", "causeway"] as const;
export type Method = (typeof METHODS)[number];

export interface Score {
  exact: boolean;
  false_blames: number;
  abstained: boolean;
}

export function score(blamed: Iterable<string>, truth: Iterable<string>): Score {
  const b = new Set(blamed);
  const t = new Set(truth);
  const falseBlames = [...b].filter((x) => !t.has(x)).length;
  return { exact: b.size === t.size && [...b].every((x) => t.has(x)), false_blames: falseBlames, abstained: b.size === 0 };
}

export interface Baselines {
  /** Untrusted inputs upstream of the action (the suspects). */
  candidates: string[];
  reach: string[];
  provenance: string[];
  reuse: string[];
}

/** The analysis of one recorded run (no tests yet): alerts, provenance, candidates, reuse. */
export function analyse(run: RunData): Investigation {
  return investigate(run, { infer: false, previewChars: 0, maxBlobs: 0 });
}

/** The three replay-free baselines for the first action the target matches. */
export function baselines(run: RunData, inv: Investigation, target: string): Baselines {
  const hit = targetHits(new RunModel(run), target)[0];
  if (!hit) throw new Error(`the target ${target} did not happen in ${run.runId}`);
  const view = inv.actions["ev:" + hit.id];
  const cands = view.candidates.filter((c) => c.kind === "input" && c.trust === "untrusted");
  const candidates = cands.map((c) => c.intervention);
  const prov = new Set<string>();
  for (const p of view.provenance) {
    if (p.status !== "untrusted-only") continue;
    for (const s of p.sources) {
      const spec = `input:${s.label}`;
      if (candidates.includes(spec)) prov.add(spec);
    }
  }
  const best = Math.max(0, ...cands.map((c) => c.reuse));
  const reuse = best > 0 ? cands.filter((c) => c.reuse === best).map((c) => c.intervention) : [];
  return { candidates, reach: candidates, provenance: [...prov], reuse };
}

/** What Find the cause blames: its causes and the members of its joint causes. */
export function blamedBy(att: Attribution): string[] {
  return [...new Set([...att.causes.map((c) => c.spec), ...att.joint.flat()])];
}
