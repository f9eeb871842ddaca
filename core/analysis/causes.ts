/**
 * What the tests recorded after Find the cause say about one action, for the investigator: the
 * causing span(s) inside an input's content, the failure shape of two causes, and fix checks.
 * Derived from tests.jsonl alone (records marked causing_span, shape_test, fix_role).
 */
import type { TestRecord } from "../log/testslog";
import { RunModel } from "../graph/model";
import { nodeId, targetHits } from "../graph/graph";
import type { ActionView, CauseDetails, FixView, ShapeView, SpanView } from "./types";

const MAX_TEXT = 20_000;
const num = (x: unknown) => (typeof x === "number" && Number.isFinite(x) ? x : 0);
const ci = (x: unknown): [number, number] => (Array.isArray(x) && x.length === 2 ? [num(x[0]), num(x[1])] : [0, 0]);

/** Attaches CauseDetails (`causes`) to each action view that has any. */
export function attachCauseDetails(m: RunModel, views: Map<string, ActionView & { causes?: CauseDetails }>, tests: readonly TestRecord[]): void {
  const relevant = tests.filter((t) => t.causing_span || t.shape_test || t.fix_role === "harm");
  if (!relevant.length) return;
  const hitsOf = new Map<string, string[]>();
  const nodesFor = (target: unknown): string[] => {
    const t = String(target ?? "");
    if (!hitsOf.has(t))
      hitsOf.set(
        t,
        targetHits(m, t).map((a) => nodeId(a.id)),
      );
    return hitsOf.get(t)!;
  };
  const detail = (node: string): CauseDetails | undefined => {
    const v = views.get(node);
    if (!v) return undefined;
    return (v.causes ??= { spans: [], shapes: [], fixes: [] });
  };
  for (const t of tests.filter((x) => x.causing_span)) {
    const cs = t.causing_span as { ranges?: unknown; level?: unknown; joint?: unknown };
    const cause = String(t.span_of ?? "");
    const ev = m.inputs.find((e) => `input:${String(e.source).replace(/[*?[]/g, (c) => `[${c}]`)}` === cause || `input:${e.source}` === cause);
    const text = ev ? m.value(ev.ref) : undefined;
    if (!ev || typeof text !== "string" || !Array.isArray(cs.ranges)) continue;
    const chars = Array.from(text);
    const whole = [...tests].reverse().find((w) => w.intervention === cause && w.target === t.target && (!t.attribution || w.attribution === t.attribution));
    const view: SpanView = {
      cause,
      source: String(ev.source),
      node: nodeId(ev.id),
      seq: ev.seq,
      line: ev.line,
      text: chars.slice(0, MAX_TEXT).join(""),
      length: chars.length,
      ranges: (cs.ranges as unknown[]).filter((r): r is [number, number] => Array.isArray(r) && r.length === 2).map((r) => [num(r[0]), num(r[1])]),
      level: String(cs.level ?? ""),
      joint: cs.joint === true,
      spec: String(t.intervention),
      effect: num(t.effect),
      ci: ci(t.ci),
      n: num(t.n),
      whole: whole ? { effect: num(whole.effect), ci: ci(whole.ci), n: num(whole.n) } : null,
      testLine: t.line,
    };
    for (const node of nodesFor(t.target)) {
      const d = detail(node);
      if (!d) continue;
      d.spans = d.spans.filter((s) => s.cause !== cause || s.spec === view.spec); // the latest narrowing of a cause wins
      if (!d.spans.some((s) => s.spec === view.spec)) d.spans.push(view);
    }
  }
  const shapes = new Map<string, TestRecord[]>();
  for (const t of tests.filter((x) => x.shape_test)) {
    const st = t.shape_test as { causes?: unknown };
    const k = `${String(t.target)}\u0000${String(t.attribution ?? "")}\u0000${JSON.stringify(st.causes)}`;
    shapes.set(k, [...(shapes.get(k) ?? []), t]);
  }
  for (const ts of shapes.values()) {
    const st = (arm: string) => ts.find((t) => (t.shape_test as { arm?: string }).arm === arm);
    const head = ts[0].shape_test as { causes: [string, string]; shape: string };
    const ab = st("ab");
    const a = st("a_alone");
    const b = st("b_alone");
    const [A, B] = head.causes;
    const arms: ShapeView["arms"] = [];
    if (ab) arms.push({ label: "both", p: num(ab.p_with), n: num(ab.n), line: ab.line });
    if (a) arms.push({ label: `${A} only`, p: num(a.p_with), n: num(a.n), line: a.line });
    if (b) arms.push({ label: `${B} only`, p: num(b.p_with), n: num(b.n), line: b.line });
    if (ab) arms.push({ label: "neither", p: num(ab.p_without), n: num(ab.n), line: ab.line });
    const contrasts: ShapeView["contrasts"] = [];
    if (ab) contrasts.push({ label: "both vs neither", effect: num(ab.effect), ci: ci(ab.ci) });
    if (a) contrasts.push({ label: `${A} only vs neither`, effect: num(a.effect), ci: ci(a.ci) });
    if (b) contrasts.push({ label: `${B} only vs neither`, effect: num(b.effect), ci: ci(b.ci) });
    const view: ShapeView = { causes: head.causes, shape: head.shape, arms, contrasts };
    for (const node of nodesFor(ts[0].target)) {
      const d = detail(node);
      if (!d) continue;
      d.shapes = d.shapes.filter((s) => JSON.stringify(s.causes) !== JSON.stringify(view.causes));
      d.shapes.push(view);
    }
  }
  for (const h of tests.filter((x) => x.fix_role === "harm")) {
    const keeps = tests.filter((k) => k.fix_check === h.fix_check && k.fix_role === "keep");
    const view: FixView = {
      fix: Array.isArray(h.fix) ? h.fix.map(String) : [String(h.intervention)],
      verdict: String(h.fix_verdict ?? ""),
      summary: String(h.fix_summary ?? ""),
      harm: { p_with: num(h.p_with), p_without: num(h.p_without), effect: num(h.effect), ci: ci(h.ci), n: num(h.n), line: h.line },
      keeps: keeps.map((k) => ({
        target: String(k.target),
        status: String(k.keep_status ?? ""),
        p_with: num(k.p_with),
        p_without: num(k.p_without),
        effect: num(k.effect),
        ci: ci(k.ci),
        line: k.line,
      })),
    };
    for (const node of nodesFor(h.target)) detail(node)?.fixes.push(view);
  }
}
