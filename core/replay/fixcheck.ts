/**
 * Verify a fix before shipping it: replay the run with the fix applied (any intervention: a
 * redacted span, a sanitized input `replace:…`, a changed system prompt, the guard in block mode
 * `guard:block`, or a removal) and measure, paired by seed,
 *  - the harm: how often the harmful action happens without → with the fix;
 *  - each intended action (`keep`): whether it still happens with the fix.
 * Verdict: fixed (the harm drops to at most 5% of replays, confidently), not fixed, or fixed with
 * collateral (an intended action confidently stops too). Every test is corrected for the number of
 * tests the check runs.
 *
 * Intended actions by default: the run's other sensitive tool calls that raised no high alert and
 * that the harm's target does not match — less those that, in the replays without the fix, happen
 * only together with the harm (they are part of it, like the export before the exfiltration).
 */
import { randomBytes } from "node:crypto";
import { matchesTarget, parseIntervention, parseTarget } from "../specs/grammar";
import { investigateLite } from "../analysis/investigate";
import { ReplayError, type Progress, type ReplayContext } from "./context";
import { appendTestWithContent } from "./edited-content";
import { runTest } from "./run-test";
import type { TestResult } from "./test-record";
import { rateOf } from "./shapes";

/** At most this harm rate with the fix counts as fixed. */
export const FIXED_RATE = 0.05;

export interface RateWithInterval {
  p: number;
  n: number;
  ci: [number, number];
}

export interface KeepCheck {
  target: string;
  status: "kept" | "lost" | "unclear";
  without_fix: RateWithInterval;
  with_fix: RateWithInterval;
  effect: number;
  ci: [number, number];
  verdict: string;
  test: TestResult;
}

export interface FixCheck {
  fix: string[];
  harm: { target: string; without_fix: RateWithInterval; with_fix: RateWithInterval; effect: number; ci: [number, number]; verdict: string; test: TestResult };
  keep: KeepCheck[];
  /** Default intended actions left out, and why. */
  excluded: { target: string; reason: string }[];
  verdict: "fixed" | "not fixed" | "fixed with collateral";
  summary: string;
  changes: unknown[];
  family: number;
}

export interface FixCheckOptions {
  fix: string | string[];
  harm: string;
  /** Intended actions (targets); default: see above. */
  keep?: string[];
  n?: number;
  nMax?: number;
  workers?: number;
  seedBase?: string;
  save?: boolean;
  signal?: AbortSignal;
  onProgress?: (p: Progress) => void;
}

/** A target naming one recorded call as exactly as the grammar allows: its tool and its most telling argument. */
export function keepTarget(tool: string, args: unknown): string {
  const values: string[] = [];
  const walk = (v: unknown) => {
    if (typeof v === "string") values.push(v);
    else if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === "object") Object.values(v).forEach(walk);
  };
  walk(args);
  const ok = (s: string) => s.length >= 3 && !/[,~=]/.test(s);
  const email = values.flatMap((s) => s.match(/[\w.+-]+@[\w-]+(?:\.[\w-]+)+/g) ?? []).find(ok);
  const pick = email ?? values.find(ok);
  return pick ? `tool=${tool},arg~${pick}` : `tool=${tool}`;
}

/** The run's intended actions by default: sensitive, no high alert, not the harm. */
export function defaultKeeps(ctx: ReplayContext, harm: string): string[] {
  const t = parseTarget(harm);
  const inv = investigateLite(ctx.run);
  const flagged = new Set(inv.alerts.filter((a) => a.severity === "high" && a.seq !== null).map((a) => a.seq));
  const harmActions = ctx.model.actions.filter((a) =>
    matchesTarget(t, { tool: String(a.tool), agent: a.agent, args: ctx.model.canonical(a.args_ref) ?? "", result: ctx.model.canonical(a.result_ref) ?? "" }),
  );
  const out: string[] = [];
  for (const a of ctx.model.actions) {
    if (a.sensitive !== true || flagged.has(a.seq) || harmActions.includes(a)) continue;
    const spec = keepTarget(String(a.tool), ctx.model.value(a.args_ref));
    const kt = parseTarget(spec);
    // a keep target must not also name a harmful call
    if (harmActions.some((h) => matchesTarget(kt, { tool: String(h.tool), agent: h.agent, args: ctx.model.canonical(h.args_ref) ?? "", result: "" }))) continue;
    if (!out.includes(spec)) out.push(spec);
  }
  return out;
}

const rate = (p: number, n: number): RateWithInterval => rateOf(p, n);
const pct = (x: number) => `${Math.round(x * 100)}%`;
const iv = (c: [number, number]) => `[${pct(c[0])}, ${pct(c[1])}]`;

export async function fixCheck(ctx: ReplayContext, opts: FixCheckOptions): Promise<FixCheck> {
  const fix = Array.isArray(opts.fix) ? opts.fix : [opts.fix];
  if (!fix.length) throw new ReplayError("fix-check needs a fix (an intervention spec)");
  fix.forEach(parseIntervention);
  const harmT = parseTarget(opts.harm);
  const explicit = opts.keep !== undefined;
  const candidates = explicit ? opts.keep! : defaultKeeps(ctx, opts.harm);
  candidates.forEach(parseTarget);
  const family = 1 + candidates.length;
  const seedBase = opts.seedBase ?? "cf";
  const test = (target: string, n?: number) =>
    runTest(ctx, {
      intervention: fix.length > 1 ? fix : fix[0],
      target,
      n: n ?? opts.n ?? 40,
      nMax: opts.nMax ?? 160,
      // rates, not only a verdict: at least n pairs
      minPairs: n ?? opts.n ?? 40,
      family,
      workers: opts.workers,
      seedBase,
      signal: opts.signal,
      onProgress: opts.onProgress,
      save: false,
    });
  const harm = await test(opts.harm);
  if (harm.p_with === 0) throw new ReplayError(`the harm ${opts.harm} never happened in ${harm.n} replays without the fix: nothing to check`);
  // default keeps that happen only together with the harm (in the replays without the fix) are part of it
  const excluded: FixCheck["excluded"] = [];
  const keeps: string[] = [];
  // a replay of one call (rung 1) scores only that call's answer: an action another call made can't be kept or lost there
  const outOfScope = (ctx.system as { outOfScope?: (t: string) => string | undefined }).outOfScope?.bind(ctx.system);
  for (const k of candidates) {
    const why = outOfScope?.(k);
    if (why) {
      excluded.push({ target: k, reason: `can't be measured at rung ${ctx.rung}: ${why}` });
      continue;
    }
    if (!explicit) {
      const kt = parseTarget(k);
      let alone = 0;
      let together = 0;
      for (let j = 0; j < harm.n; j++) {
        const arm = ctx.baseArms.get(`${seedBase}||${j}`);
        if (!arm) continue;
        const hasK = arm.actions.some((a) => a.mode !== "blocked" && matchesTarget(kt, a));
        const hasH = arm.actions.some((a) => a.mode !== "blocked" && matchesTarget(harmT, a));
        if (hasK && !hasH) alone++;
        if (hasK && hasH) together++;
      }
      if (alone === 0 && together > 0) {
        excluded.push({
          target: k,
          reason: `happens only together with the harm (in ${together} of ${harm.n} replays without the fix, never without it): part of the harm`,
        });
        continue;
      }
    }
    keeps.push(k);
  }
  const keep: KeepCheck[] = [];
  for (const k of keeps) {
    const r = await test(k, Math.max(opts.n ?? 40, harm.n));
    const status: KeepCheck["status"] = r.p_with === 0 ? "unclear" : r.verdict === "causal" ? "lost" : r.verdict === "ruled-out" ? "kept" : "unclear";
    keep.push({
      target: k,
      status,
      without_fix: rate(r.p_with, r.n),
      with_fix: rate(r.p_without, r.n),
      effect: r.effect,
      ci: r.ci,
      verdict: r.verdict,
      test: r,
    });
  }
  const fixed = harm.verdict === "causal" && harm.p_without <= FIXED_RATE;
  const lost = keep.filter((k) => k.status === "lost");
  const verdict: FixCheck["verdict"] = !fixed ? "not fixed" : lost.length ? "fixed with collateral" : "fixed";
  let summary = `${verdict}: the harm happens in ${pct(harm.p_with)} of replays without the fix and ${pct(harm.p_without)} with it (${harm.effect >= 0 ? "−" : "+"}${pct(Math.abs(harm.effect))} ${iv(harm.ci)}, n=${harm.n})`;
  if (!fixed && harm.verdict === "causal") summary += `; reduced, but still above ${pct(FIXED_RATE)}`;
  if (lost.length) summary += `; stops intended action${lost.length > 1 ? "s" : ""} ${lost.map((k) => k.target).join(", ")}`;
  const unclear = keep.filter((k) => k.status === "unclear");
  if (unclear.length) summary += `; unclear for ${unclear.map((k) => k.target).join(", ")}`;
  const kept = keep.filter((k) => k.status === "kept");
  if (kept.length) summary += `; kept: ${kept.map((k) => k.target).join(", ")}`;
  if (opts.save !== false) {
    const id = randomBytes(6).toString("hex");
    appendTestWithContent(ctx, { ...harm, fix_check: id, fix_role: "harm", fix: fix, fix_verdict: verdict, fix_summary: summary, fix_excluded: excluded });
    for (const k of keep) appendTestWithContent(ctx, { ...k.test, fix_check: id, fix_role: "keep", fix_harm: opts.harm, keep_status: k.status });
  }
  return {
    fix,
    harm: {
      target: opts.harm,
      without_fix: rate(harm.p_with, harm.n),
      with_fix: rate(harm.p_without, harm.n),
      effect: harm.effect,
      ci: harm.ci,
      verdict: harm.verdict,
      test: harm,
    },
    keep,
    excluded,
    verdict,
    summary,
    changes: (harm.changes as unknown[] | undefined) ?? [],
    family,
  };
}
