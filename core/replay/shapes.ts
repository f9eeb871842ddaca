/**
 * Failure shapes: how two confirmed causes of one action combine, from the four arms of a 2×2
 * replay — both present (as recorded), A only, B only, neither — paired by seed. Three paired
 * tests (runTest) compare them: both vs neither (together they matter), A only vs neither (A is
 * enough on its own), B only vs neither.
 *  - either (redundant): each is enough on its own;
 *  - both (conjunctive): neither is enough alone, together they are — each is needed;
 *  - single: one of them is enough alone, the other is not;
 *  - unclear: together they are not shown to matter.
 * The tests are corrected together with the attribution's family.
 */
import { appendTest } from "../log/testslog";
import { followUpTest, type FollowUpOptions } from "./run-test";
import type { ReplayContext } from "./context";
import type { TestResult } from "./test-record";
import { wilson } from "../stats/intervals";
import type { Attribution } from "./attribute-types";

export type ShapeKind = "single" | "either" | "both" | "unclear";

export interface Arm {
  /** Which causes are present in this arm. */
  present: string[];
  p: number;
  n: number;
  /** Wilson 95% interval of the rate. */
  ci: [number, number];
}

export interface FailureShape {
  causes: [string, string];
  shape: ShapeKind;
  arms: { both: Arm; a_only: Arm; b_only: Arm; neither: Arm };
  /** Both vs neither; A only vs neither; B only vs neither: the paired tests. */
  tests: { ab: TestResult; a_alone: TestResult; b_alone: TestResult };
  summary: string;
}

export type ShapeOptions = FollowUpOptions;

/** The causes an attribution confirmed, for shapes: single causes, then members of joint groups. */
export function confirmedCauses(a: Pick<Attribution, "causes" | "joint">): string[] {
  const out: string[] = [];
  for (const c of a.causes) if (!out.includes(c.spec)) out.push(c.spec);
  for (const j of a.joint) for (const s of j) if (!out.includes(s)) out.push(s);
  return out;
}

/** A rate with its Wilson 95% interval (4 decimals): an arm of a shape, a harm rate of a fix check. */
export function rateOf(p: number, n: number): { p: number; n: number; ci: [number, number] } {
  const [lo, hi] = wilson(Math.round(p * n), n);
  return { p, n, ci: [Math.round(lo * 10000) / 10000, Math.round(hi * 10000) / 10000] };
}

export function classify(ab: TestResult, aAlone: TestResult, bAlone: TestResult): ShapeKind {
  if (ab.verdict !== "causal") return "unclear";
  const sa = aAlone.verdict === "causal";
  const sb = bAlone.verdict === "causal";
  if (sa && sb) return "either";
  if (!sa && !sb) return "both";
  return "single";
}

const pct = (x: number) => `${Math.round(x * 100)}%`;

/** The shape of each pair of causes (at most the first four causes: six pairs). */
export async function failureShapes(ctx: ReplayContext, causes: string[], opts: ShapeOptions): Promise<FailureShape[]> {
  const list = causes.slice(0, 4);
  const pairs: [string, string][] = [];
  for (let i = 0; i < list.length; i++) for (let j = i + 1; j < list.length; j++) pairs.push([list[i], list[j]]);
  const family = (opts.family ?? 1) + 3 * pairs.length;
  const test = (specs: string[], baseline?: string[]): Promise<TestResult> => followUpTest(ctx, opts, family, specs.length > 1 ? specs : specs[0], baseline);
  const out: FailureShape[] = [];
  for (const [A, B] of pairs) {
    const ab = await test([A, B]);
    const aAlone = await test([A, B], [B]); // with: A only; without: neither
    const bAlone = await test([A, B], [A]);
    const arm = (present: string[], p: number, n: number): Arm => ({ present, ...rateOf(p, n) });
    const shape = classify(ab, aAlone, bAlone);
    const what =
      shape === "both"
        ? `each is needed: with ${A} alone it happens in ${pct(aAlone.p_with)}, with ${B} alone in ${pct(bAlone.p_with)}, with both in ${pct(ab.p_with)} of replays`
        : shape === "either"
          ? `each is enough on its own: with ${A} alone it happens in ${pct(aAlone.p_with)}, with ${B} alone in ${pct(bAlone.p_with)}, with neither in ${pct(ab.p_without)}`
          : shape === "single"
            ? `${aAlone.verdict === "causal" ? A : B} is enough on its own, ${aAlone.verdict === "causal" ? B : A} is not`
            : "together they are not shown to matter";
    out.push({
      causes: [A, B],
      shape,
      arms: {
        both: arm([A, B], ab.p_with, ab.n),
        a_only: arm([A], aAlone.p_with, aAlone.n),
        b_only: arm([B], bAlone.p_with, bAlone.n),
        neither: arm([], ab.p_without, ab.n),
      },
      tests: { ab, a_alone: aAlone, b_alone: bAlone },
      summary: `${shape}: ${what}`,
    });
  }
  if (opts.save !== false) {
    for (const s of out) {
      for (const [arm, t] of Object.entries(s.tests)) {
        appendTest(ctx.run.dir, {
          ...t,
          shape_test: { causes: s.causes, shape: s.shape, arm },
          ...(opts.attribution ? { attribution: opts.attribution } : {}),
        });
      }
    }
  }
  return out;
}
