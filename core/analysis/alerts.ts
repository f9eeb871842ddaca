/**
 * What happened, as alerts: the reference's rules (integrity, evidence, untrusted value, untrusted
 * reach, blocked, tool and model errors, stubs) over a run's calls and their views.
 */
import { safeText } from "../log/sanitize";
import { nodeId, textOf } from "../graph/graph";
import type { RunModel } from "../graph/model";
import type { UntrustedReach } from "./reach";
import type { ActionView, Alert, Severity } from "./types";

const RANK: Record<Severity, number> = { high: 0, review: 1, info: 2 };

/** Sources an untrusted-reach alert lists as evidence. */
const EVIDENCE_MAX = 20;
/**
 * Sources an untrusted-reach alert names in its detail in the investigator, the report and the
 * Problems view; the others are counted ("and 2317 more"). A call deep in a big run is reached by
 * thousands, and naming them all made the alerts of a 20,000-event run 48 MB. `causeway alerts`
 * names every one, as the reference does.
 */
export const REACH_NAMED = 10;

/** The alerts of a run; an untrusted-reach alert names `reachNamed` sources (all by default, as the reference). */
export function alertsOf(m: RunModel, reach: UntrustedReach, views: Map<string, ActionView>, reachNamed = Infinity): Alert[] {
  const out: Alert[] = [];
  const errors = m.run.problems.filter((p) => p.severity === "error");
  if (errors.length) {
    const p = errors[0];
    out.push({
      severity: "high",
      rule: "integrity",
      title: "Log failed integrity check",
      detail: p.message + (errors.length > 1 ? ` (and ${errors.length - 1} more problem${errors.length === 2 ? "" : "s"})` : ""),
      seq: null,
      tool: null,
      line: p.line,
    });
  }
  const ev = m.start.meta?.evidence_alerts;
  if (Array.isArray(ev)) {
    for (const e of ev as Record<string, unknown>[]) {
      out.push({
        severity: "high",
        rule: "evidence",
        title: safeText(e?.title ?? "Evidence problem", 200),
        detail: safeText(e?.detail ?? "", 2000),
        seq: null,
        tool: null,
      });
    }
  }
  for (const a of m.actions) {
    const v = views.get(nodeId(a.id));
    if (!v) continue;
    const base = {
      seq: a.seq,
      tool: a.tool,
      agent: a.agent,
      node: v.node,
      line: a.line,
      site: v.site,
      target: v.target,
      sensitive: v.sensitive,
    };
    const cause = v.candidates.find((c) => c.status === "primary" || c.status === "confirmed" || c.status === "contributing");
    const causeRef = cause ? { intervention: cause.intervention, role: cause.role, effect: cause.test!.effect, ci: cause.test!.ci, n: cause.test!.n } : null;
    const bad = v.provenance.filter((p) => p.status === "untrusted-only");
    if (a.status !== "blocked" && v.sensitive && bad.length) {
      out.push({
        ...base,
        severity: "high",
        rule: "untrusted-value",
        title: `${a.tool} used a value that only untrusted content supplied`,
        detail: `'${bad[0].value}' appears only in ${bad[0].sources.map((s) => s.label).join(", ")}.`,
        value: bad[0].value,
        evidence: bad[0].sources,
        cause: causeRef,
      });
    } else if (a.status !== "blocked" && v.sensitive) {
      const up = reach.of(a.id);
      if (up.length) {
        const named = up.slice(0, reachNamed).map((id) => m.byId.get(id)!.source);
        const more = up.length - named.length;
        out.push({
          ...base,
          severity: "review",
          rule: "untrusted-reach",
          title: `Sensitive action ${a.tool} is downstream of untrusted input`,
          detail: `Reached from ${named.join(", ")}${more ? ` and ${more} more (${up.length} untrusted inputs)` : ""}. Reach is not cause; test it.`,
          reached: up.length,
          evidence: up.slice(0, EVIDENCE_MAX).map((id) => {
            const e = m.byId.get(id)!;
            return { node: nodeId(e.id), seq: e.seq, line: e.line, label: safeText(e.source), trust: "untrusted", ref: safeText(e.ref ?? "") };
          }),
          cause: causeRef,
        });
      }
    }
    if (a.status === "blocked") {
      // runs in the older tracekit layout of the format record a policy decision ("deny", "ask") on a blocked action
      const decision = safeText((a as { policy?: { decision?: string } }).policy?.decision);
      const by = ["deny", "ask"].includes(decision) ? `the run's recorded policy (${decision})` : "the guard";
      out.push({
        ...base,
        severity: "high",
        rule: "blocked",
        title: `${a.tool} was blocked by ${by}`,
        detail: safeText(a.guard?.reason ?? ""),
        evidence: bad[0]?.sources,
      });
    } else if (a.status === "error") {
      out.push({ ...base, severity: "review", rule: "tool-error", title: `${a.tool} failed`, detail: textOf(m.value(a.result_ref)).slice(0, 200) });
    }
    if (a.mode === "stub") out.push({ ...base, severity: "info", rule: "stubbed", title: `${a.tool} was stubbed in replay`, detail: "" });
  }
  for (const d of m.decisions) {
    if (d.status === "error") {
      out.push({
        severity: "review",
        rule: "model-error",
        title: `Model call failed (${d.agent})`,
        detail: textOf(m.value(d.output)).slice(0, 200),
        seq: d.seq,
        tool: null,
        agent: d.agent,
        node: nodeId(d.id),
        line: d.line,
        site: d.site,
      });
    }
  }
  out.sort((x, y) => RANK[x.severity] - RANK[y.severity] || (x.seq ?? -1) - (y.seq ?? -1));
  return out;
}

/** The JSON shape `causeway alerts --json` prints. */
export function alertRecord(a: Alert): { severity: Severity; rule: string; title: string; detail: string; seq: number | null; tool: string | null } {
  return { severity: a.severity, rule: a.rule, title: a.title, detail: a.detail, seq: a.seq, tool: a.tool };
}
