/**
 * The live guard: checks sensitive tool calls before they run. Its built-in rule is the high
 * alert's: a sensitive call using a value that appears only in untrusted content seen so far. In
 * `block` mode such a call does not run, the agent gets an error result, and the action is recorded
 * as blocked with the verdict; in `alert` mode the call runs and the verdict is recorded. Custom
 * rules are functions of the call. It is a tripwire, not a defence: a paraphrased or re-encoded
 * value passes it.
 */
import { traceValues, type TracedValue, type ValueSource } from "../analysis/values";
import { canonical } from "../log/hash";
import { matchesTarget, type Intervention } from "../specs/grammar";

export type GuardMode = "off" | "alert" | "block";

export interface GuardAlert {
  severity: "high" | "review";
  rule: string;
  title: string;
  detail?: string;
}

/** What a rule sees of a call about to run. */
export interface CheckContext {
  runId: string;
  agent: string;
  tool: string;
  args: unknown;
  sensitive: boolean;
  /** Content the run has seen so far (task, inputs, results of calls not blocked). */
  sources: readonly ValueSource[];
  /** The built-in provenance of each traced argument value. */
  values: readonly TracedValue[];
}

export type GuardRule = (ctx: CheckContext) => (Partial<GuardAlert> & { title: string }) | null | undefined | false;

export interface GuardVerdict {
  verdict: "allow" | "alert" | "block";
  reason: string;
  alerts: GuardAlert[];
}

export interface GuardOptions {
  rules?: GuardRule[];
  /** Called with each alert the guard raises whose severity is in `notify`. */
  onAlert?: (alert: GuardAlert, ctx: CheckContext) => void;
  /** Which severities reach onAlert (default: high). */
  notify?: Array<GuardAlert["severity"]>;
  /** Keep the built-in provenance rule (default true). */
  builtin?: boolean;
}

export class Guard {
  constructor(
    readonly mode: GuardMode = "alert",
    readonly opts: GuardOptions = {},
  ) {}

  /** A short description recorded in run.start. */
  describe(): Record<string, unknown> {
    return { mode: this.mode, rules: (this.opts.rules ?? []).map((r) => r.name || "custom"), builtin: this.opts.builtin !== false };
  }

  check(input: Omit<CheckContext, "values">): GuardVerdict {
    if (this.mode === "off") return { verdict: "allow", reason: "", alerts: [] };
    const ctx: CheckContext = { ...input, values: traceValues(input.args, input.sources) };
    const alerts: GuardAlert[] = [];
    if (ctx.sensitive && this.opts.builtin !== false) {
      for (const v of ctx.values) {
        if (v.origin !== "untrusted-only") continue;
        const from = [...new Set(v.sources.map((s) => s.source))].join(", ");
        alerts.push({
          severity: "high",
          rule: "untrusted-value",
          title: `${ctx.tool} uses ${v.value}, found only in untrusted content`,
          detail: `argument ${v.path || "(value)"} = ${JSON.stringify(v.value)} appears only in ${from}`,
        });
      }
    }
    for (const rule of this.opts.rules ?? []) {
      let r: ReturnType<GuardRule>;
      try {
        r = rule(ctx);
      } catch (err) {
        r = { title: `guard rule ${rule.name || "custom"} failed: ${(err as Error).message}`, severity: "review" };
      }
      if (r) alerts.push({ severity: r.severity ?? "high", rule: r.rule ?? (rule.name || "custom"), title: r.title, detail: r.detail });
    }
    const notify = new Set(this.opts.notify ?? ["high"]);
    for (const a of alerts) {
      if (notify.has(a.severity) && this.opts.onAlert) {
        try {
          this.opts.onAlert(a, ctx);
        } catch {
          /* a failing notifier must not stop the agent */
        }
      }
    }
    if (!alerts.length) return { verdict: "allow", reason: "", alerts };
    const high = alerts.filter((a) => a.severity === "high");
    const reason = (high[0] ?? alerts[0]).title;
    if (this.mode === "block" && high.length) return { verdict: "block", reason, alerts };
    return { verdict: "alert", reason, alerts };
  }
}

/** The guard a `guard:block` intervention asks for (none when no intervention is a guard). */
export function guardOf(ivs: readonly Intervention[] | undefined): Guard | undefined {
  const g = ivs?.find((iv) => iv.guard)?.guard;
  if (!g) return undefined;
  if (!g.target) return new Guard("block");
  const target = g.target;
  const rule = (c: { tool: string; agent: string; args: unknown }) =>
    matchesTarget(target, { tool: c.tool, agent: c.agent, args: canonical(c.args ?? {}), result: "" })
      ? { title: `${c.tool} matches the guard rule ${target.spec}`, rule: "fix-rule" }
      : null;
  Object.defineProperty(rule, "name", { value: `block ${target.spec}` });
  return new Guard("block", { builtin: false, rules: [rule] });
}
