/**
 * After Find the cause: narrow each confirmed input to its causing span(s), and, with two or more
 * confirmed causes, say how they combine (failure shapes). The tests share the attribution's
 * replay context (its cached arms) and extend its error control.
 */
import type { Attribution } from "./attribute-types";
import { BudgetExceeded, ReplayError, type Progress, type ReplayContext } from "./context";
import { causingSpans, inputOfCause, type SpanResult } from "./spans";
import { confirmedCauses, failureShapes, type FailureShape } from "./shapes";

export interface NarrowOptions {
  spans?: boolean;
  shapes?: boolean;
  n?: number;
  nMax?: number;
  workers?: number;
  save?: boolean;
  signal?: AbortSignal;
  onProgress?: (p: Progress) => void;
}

export interface Narrowed {
  spans: SpanResult[];
  shapes: FailureShape[];
  /** Causes not narrowed, and why. */
  skipped: { cause: string; reason: string }[];
}

export async function narrowAttribution(ctx: ReplayContext, a: Attribution, opts: NarrowOptions = {}): Promise<Narrowed> {
  const out: Narrowed = { spans: [], shapes: [], skipped: [] };
  const common = {
    target: a.target,
    n: opts.n,
    nMax: opts.nMax,
    workers: opts.workers,
    save: opts.save,
    attribution: a.attribution_id,
    signal: opts.signal,
    onProgress: opts.onProgress,
  };
  if (opts.spans !== false) {
    for (const c of a.causes) {
      const found = inputOfCause(ctx.model, c.spec);
      if (typeof found === "string") {
        out.skipped.push({ cause: c.spec, reason: found });
        continue;
      }
      try {
        out.spans.push(await causingSpans(ctx, { ...common, cause: c.spec, whole: c, family: a.family }));
      } catch (err) {
        if (err instanceof BudgetExceeded) {
          out.skipped.push({ cause: c.spec, reason: "the model-call budget ran out" });
          return out;
        }
        if (!(err instanceof ReplayError)) throw err;
        out.skipped.push({ cause: c.spec, reason: err.message });
      }
    }
  }
  const causes = confirmedCauses(a);
  if (opts.shapes !== false && causes.length >= 2) {
    try {
      out.shapes = await failureShapes(ctx, causes, { ...common, family: a.family });
    } catch (err) {
      if (!(err instanceof BudgetExceeded)) throw err;
      out.skipped.push({ cause: causes.join(" + "), reason: "failure shape: the model-call budget ran out" });
    }
  }
  return out;
}
