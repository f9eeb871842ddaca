/**
 * Analysis of one run: alerts (the reference's rules), argument provenance, candidate causes with
 * their test status, lineage, the timeline, the summary, per-agent and per-channel views, and the
 * influence matrix — assembled into one plain {@link Investigation}. Everything is derived from the
 * log and the tests recorded against it; nothing calls a model.
 */
import { safeText } from "../log/sanitize";
import type { ActionEvent, LoadedEvent } from "../log/events";
import type { RunData } from "../log/reader";
import type { TestRecord } from "../log/testslog";
import { buildGraph, criticalPath, nodeId, nodesMatching, targetHits, textOf, type GNode, type Graph, type GraphOptions } from "../graph/graph";
import { Bits, closure } from "../graph/closure";
import { RunModel } from "../graph/model";
import { copiedFrom, specificValues } from "../graph/copied";
import { roleFor } from "../stats";
import { ProvenanceIndex } from "./provenance";
import { attachCauseDetails } from "./causes";
import { countedRun, foreignByAction } from "./foreign";
import { UntrustedReach } from "./reach";
import { howTested } from "./tested";
import { SENSITIVE_NAME_RE, tracedValues } from "./values";
import { canonical } from "../log/hash";
import type {
  ActionView,
  AgentRow,
  Alert,
  BlobPreview,
  Candidate,
  CandidateStatus,
  ChannelRow,
  EventView,
  Investigation,
  Matrix,
  ProvenanceRow,
  RunSummary,
  Severity,
  TestSummary,
  TimelineRow,
} from "./types";
import { pct, signed } from "../format";

const RANK: Record<Severity, number> = { high: 0, review: 1, info: 2 };
const EMAIL_FULL = /^[\w.+-]+@[\w-]+(?:\.[\w-]+)+$/;

/** "declared" when the run marked the call sensitive; "by name" when the run declares none and the name suggests it. */
export function sensitivity(m: RunModel, a: ActionEvent): "declared" | "by name" | null {
  if (a.sensitive === true) return "declared";
  if (!m.sensitiveDeclared() && SENSITIVE_NAME_RE.test(safeText(a.tool ?? ""))) return "by name";
  return null;
}

function short(v: unknown, n = 90): string {
  const s = textOf(v).replace(/\n/g, " ");
  return s.length <= n ? s : s.slice(0, n - 1) + "…";
}

export function testSummary(t: TestRecord): TestSummary {
  const num = (x: unknown) => (typeof x === "number" && Number.isFinite(x) ? x : null);
  const ci = Array.isArray(t.ci) && t.ci.length === 2 ? ([num(t.ci[0]) ?? 0, num(t.ci[1]) ?? 0] as [number, number]) : ([0, 0] as [number, number]);
  return {
    intervention: safeText(t.intervention ?? ""),
    target: safeText(t.target ?? ""),
    n: num(t.n) ?? 0,
    p_with: num(t.p_with),
    p_without: num(t.p_without),
    effect: num(t.effect) ?? 0,
    ci,
    verdict: safeText(t.verdict ?? "inconclusive"),
    role: typeof t.role === "string" ? t.role : null,
    p_value: num(t.p_value),
    looks: typeof t.looks === "number" ? t.looks : undefined,
    stopped: typeof t.stopped === "string" ? t.stopped : undefined,
    n_needed: num(t.n_needed),
    scope: typeof t.scope === "string" ? t.scope : "run",
    line: t.line,
    chained: t.chained,
    group: Array.isArray(t.group) ? t.group.map((g) => safeText(g)) : safeText(t.intervention ?? "").includes(" | ") ? safeText(t.intervention).split(" | ") : undefined,
    ...(t.by !== undefined ? { by: safeText(t.by) } : {}),
    ...(t.foreign ? { foreign: true } : {}),
    ...((typeof t.baseline === "string" && t.baseline) || (Array.isArray(t.baseline) && t.baseline.length) ? { baseline: true } : {}),
    ...howTested(t),
  };
}

/** The role of a causal test: its recorded role, or one judged from its interval. */
function causalRole(t: TestSummary): "primary" | "contributing" | "confirmed" {
  const r = t.role === "cause" ? "confirmed" : t.role;
  if (r === "primary" || r === "contributing" || r === "confirmed") return r;
  return roleFor(t.ci, t.p_with ?? 0);
}

/** ruled-out or inconclusive (no-effect-seen when a sequential test stopped for futility). */
function settled(t: TestSummary): CandidateStatus {
  if (t.verdict === "inconclusive" && t.stopped === "futility") return "no-effect-seen";
  if (t.verdict === "ruled-out" || t.verdict === "inconclusive") return t.verdict;
  const [lo, hi] = t.ci;
  return hi < 0.2 && lo > -0.2 ? "ruled-out" : "inconclusive";
}

/** Run-scope tests, with the set of action ids each one's target matched. */
class TestIndex {
  readonly runTests: { t: TestSummary; hits: Set<string> }[] = [];
  private matched = new Map<string, Set<string>>();
  constructor(
    private m: RunModel,
    private g: Graph,
  ) {
    const hitCache = new Map<string, Set<string>>();
    for (const rec of m.run.tests) {
      const t = testSummary(rec);
      if ((t.scope ?? "run") !== "run") continue;
      let hits = hitCache.get(t.target);
      if (!hits) {
        hits = new Set(targetHits(m, t.target).map((a) => a.id));
        hitCache.set(t.target, hits);
      }
      this.runTests.push({ t, hits });
    }
  }
  nodesOf(spec: string): Set<string> {
    let s = this.matched.get(spec);
    if (!s) {
      s = new Set(nodesMatching(this.m, this.g, spec));
      this.matched.set(spec, s);
    }
    return s;
  }
}

/** Untested candidates listed per call beyond the tested ones (a call deep in a big run has thousands upstream). */
export const CANDIDATES_MAX = 20;

/** A call's upstream: the ancestors of its model call, as positions in {@link Upstream.members}. */
interface Up {
  anc: Bits;
  /** The candidate rows when no test names the call (shared by the calls of one model call). */
  untested?: { rows: Candidate[]; total: number };
}

/**
 * Upstream of each call, shared by the calls of one model call (they have the same upstream). The
 * ancestor sets of every model call are computed in one pass over the graph (core/graph/closure.ts)
 * as bits over the nodes an intervention can remove, in seq order; a graph with a cycle (a damaged
 * log) falls back to one search per model call.
 */
class Upstream {
  /** Input, message and action nodes in seq order: the positions of an ancestor set. */
  readonly members: GNode[];
  private readonly pos = new Map<string, number>();
  /** Per member: the intervention that removes it, as an index into specs; -1 for calls and the task. */
  readonly specOf: Int32Array;
  readonly specs: string[] = [];
  /** Per member: how much of its wording the next model output reused (its observed edges' most). */
  readonly reuse: Float64Array;
  /** Per spec: the stamp of the last scan that saw it. */
  private readonly seen: Int32Array;
  private stamp = 0;
  private sets: Map<string, Bits> | null | undefined;
  private readonly cache = new Map<string, Up>();
  constructor(
    private m: RunModel,
    private g: Graph,
  ) {
    this.members = [...g.nodes.values()].filter((n) => n.type !== "decision").sort((x, y) => x.seq - y.seq);
    this.specOf = new Int32Array(this.members.length).fill(-1);
    this.reuse = new Float64Array(this.members.length);
    const specIds = new Map<string, number>();
    this.members.forEach((n, i) => {
      this.pos.set(n.id, i);
      const ev = m.byId.get(n.eventId)!;
      let spec: string | null = null;
      if (n.type === "input" && ev.kind !== "task") spec = `input:${ev.source}`;
      else if (n.type === "message") spec = `msg:${ev.agent}->${ev.to}`;
      if (spec !== null) {
        let s = specIds.get(spec);
        if (s === undefined) {
          s = this.specs.length;
          specIds.set(spec, s);
          this.specs.push(spec);
        }
        this.specOf[i] = s;
      }
      for (const e of g.outEdges(n.id, ["observed"])) this.reuse[i] = Math.max(this.reuse[i], e.reuse ?? 0);
    });
    this.seen = new Int32Array(this.specs.length);
  }
  private keyOf(a: ActionEvent): string {
    return typeof a.decision === "string" && this.g.nodes.has(nodeId(a.decision)) ? nodeId(a.decision) : nodeId(a.id);
  }
  of(a: ActionEvent): Up {
    const key = this.keyOf(a);
    let hit = this.cache.get(key);
    if (!hit) {
      if (this.sets === undefined) {
        const keys = new Set(this.m.actions.map((x) => this.keyOf(x)));
        this.sets = closure(this.g, { direction: "up", evidence: ["observed"], width: this.members.length, labelOf: (n) => this.pos.get(n.id) ?? -1, keep: (n) => keys.has(n.id) });
      }
      let anc = this.sets?.get(key);
      if (!anc) {
        anc = Bits.empty(this.members.length);
        for (const id of this.g.ancestors(key)) if (this.pos.has(id)) anc.add(this.pos.get(id)!);
      }
      hit = { anc };
      this.cache.set(key, hit);
    }
    return hit;
  }
  has(anc: Bits, id: string): boolean {
    const i = this.pos.get(id);
    return i !== undefined && anc.has(i);
  }
  /** Calls fn with the member each distinct spec upstream is first seen at, in seq order. */
  eachSpec(anc: Bits, fn: (i: number, spec: number) => void): void {
    const stamp = ++this.stamp;
    anc.forEach((i) => {
      const s = this.specOf[i];
      if (s < 0 || this.seen[s] === stamp) return;
      this.seen[s] = stamp;
      fn(i, s);
    });
  }
}

/**
 * The candidate causes of a call: every upstream input and message channel with its test status,
 * best first. Untested ones past {@link CANDIDATES_MAX} are left off (tested ones never are);
 * `total` counts them all.
 */
function candidates(m: RunModel, g: Graph, idx: TestIndex, up: Upstream, a: ActionEvent): { rows: Candidate[]; total: number } {
  const hit = up.of(a);
  const mine = idx.runTests.filter((x) => x.hits.has(a.id));
  // no test names this call: its rows are those of every call of the same model call
  const c = mine.length ? candidateRows(idx, up, hit.anc, mine) : (hit.untested ??= candidateRows(idx, up, hit.anc, mine));
  const kept = c.rows.map((r) => ({ ...r }));
  const callValues = specificValues(m.value(a.args_ref));
  for (const r of kept) r.copied = copiedFrom(m.value(m.byId.get(g.nodes.get(r.node)!.eventId)!.ref), callValues);
  return { rows: kept, total: c.total };
}

const STATUS_ORDER: Record<CandidateStatus, number> = { primary: 0, confirmed: 1, contributing: 2, joint: 3, suppressive: 4, inconclusive: 5, untested: 6, "no-effect-seen": 7, "ruled-out": 8 };

/** Candidate order: by status; inputs before the messages that carried them; effect; untrusted first; reuse. */
function rowOrder(x: Candidate, y: Candidate): number {
  return (
    STATUS_ORDER[x.status] - STATUS_ORDER[y.status] ||
    // a message only carries what an input put in it: name the input first
    Number(x.kind === "message") - Number(y.kind === "message") ||
    (y.test?.effect ?? 0) - (x.test?.effect ?? 0) ||
    Number(x.trust !== "untrusted") - Number(y.trust !== "untrusted") ||
    y.reuse - x.reuse
  );
}

/**
 * The candidate rows of a call's upstream, best first: every row a test names (or a causal group
 * joins), and the best {@link CANDIDATES_MAX} of the untested ones, chosen in one scan without
 * building the others; `total` counts every row. (Copied values are filled in per call.)
 */
function candidateRows(idx: TestIndex, up: Upstream, anc: Bits, mine: TestIndex["runTests"]): { rows: Candidate[]; total: number } {
  const row = (i: number, status: CandidateStatus, test: TestSummary | null): Candidate => {
    const n = up.members[i];
    return {
      node: n.id,
      label: n.label,
      kind: n.type,
      agent: n.agent,
      trust: n.trust,
      intervention: up.specs[up.specOf[i]],
      status,
      role: status === "primary" || status === "contributing" || status === "confirmed" ? status : null,
      test,
      reuse: up.reuse[i],
    };
  };
  // what the call's tests name: specs, the one upstream node an intervention removes, group members
  const named = new Set<string>();
  const single = new Map<TestSummary, string | null>();
  for (const { t } of mine) {
    if (t.group) {
      for (const g of t.group) named.add(g);
      continue;
    }
    named.add(t.intervention);
    let only: string | null = null;
    let k = 0;
    for (const id of idx.nodesOf(t.intervention)) if (up.has(anc, id) && ++k === 1) only = id;
    single.set(t, k === 1 ? only : null);
  }
  const shown: { r: Candidate; i: number }[] = [];
  const best: { r: Candidate; i: number }[] = []; // the best untested rows so far, best first
  const offer = (r: Candidate, i: number) => {
    if (best.length === CANDIDATES_MAX && rowOrder(r, best[best.length - 1].r) >= 0) return;
    let at = best.length;
    while (at > 0 && rowOrder(r, best[at - 1].r) < 0) at--;
    best.splice(at, 0, { r, i });
    if (best.length > CANDIDATES_MAX) best.pop();
  };
  const singles = new Set(single.values());
  // an untested row, to compare before building one that cannot enter the best
  const probe: Candidate = { node: "", label: "", kind: "", agent: "", trust: "", intervention: "", status: "untested", role: null, test: null, reuse: 0 };
  let total = 0;
  up.eachSpec(anc, (i, s) => {
    total++;
    const spec = up.specs[s];
    const nid = up.members[i].id;
    if (!named.has(spec) && !singles.has(nid)) {
      if (best.length === CANDIDATES_MAX) {
        probe.kind = up.members[i].type;
        probe.trust = up.members[i].trust;
        probe.reuse = up.reuse[i];
        if (rowOrder(probe, best[best.length - 1].r) >= 0) return;
      }
      offer(row(i, "untested", null), i);
      return;
    }
    const tests = mine.map((x) => x.t).filter((t) => !t.group && (t.intervention === spec || single.get(t) === nid));
    // the latest test that applied (tests.jsonl order): a new Run test or Find the cause
    // supersedes earlier ones, so the verdict here and the job's notification name the same
    // result (choosing the test with the most replays showed an older +0.63 beside a new +0.70)
    const applied = tests.filter((t) => t.verdict !== "not-applied");
    let latest = applied.length ? applied[applied.length - 1] : tests.length ? tests[tests.length - 1] : null;
    let status: CandidateStatus;
    if (!latest || latest.verdict === "not-applied") {
      // no test of its own: what the last group test that removed it (nothing put back) said, as
      // Find the cause reads it; a causal group leaves each member undecided on its own
      const g = groupTestOf(mine, spec);
      if (g) latest = g;
      status = !g ? "untested" : g.verdict === "causal" || g.verdict === "suppressive" ? "inconclusive" : settled(g);
    } else if (latest.verdict === "causal") status = causalRole(latest);
    else if (latest.verdict === "suppressive") status = "suppressive";
    else status = settled(latest);
    // a causal group in which no single member is causal: each member is a joint (redundant) cause
    if (status === "untested" || status === "ruled-out" || status === "inconclusive" || status === "no-effect-seen") {
      const joint = mine.some((x) => x.t.group && x.t.verdict === "causal" && x.t.group.includes(spec) && x.t.group.every((member) => !mine.some((y) => y.t.intervention === member && y.t.verdict === "causal")) && x.t.group.some((member) => mine.some((y) => y.t.intervention === member)));
      if (joint) status = "joint";
    }
    if (status === "untested") offer(row(i, status, latest), i);
    else shown.push({ r: row(i, status, latest), i });
  });
  const rows = [...shown, ...best].sort((x, y) => rowOrder(x.r, y.r) || x.i - y.i).map((x) => x.r);
  return { rows, total };
}

/** The last applied group test of a call that removed `spec` with nothing put back, if any. */
function groupTestOf(mine: TestIndex["runTests"], spec: string): TestSummary | null {
  for (let i = mine.length - 1; i >= 0; i--) {
    const t = mine[i].t;
    if (t.group && !t.baseline && t.verdict !== "not-applied" && t.group.includes(spec)) return t;
  }
  return null;
}

/** One sentence of verdict for a tool call; `reached` counts the untrusted inputs upstream of it. */
function verdictSentence(v: ActionView, reached: number): string {
  const causes = v.candidates.filter((c) => c.status === "primary" || c.status === "confirmed" || c.status === "contributing");
  if (causes.length) {
    const c = causes[0];
    const t = c.test!;
    const kind = c.status === "primary" ? "the primary cause" : c.status === "contributing" ? "a contributing factor" : "a confirmed cause";
    return `${c.intervention.replace(/^input:/, "")} is ${kind}: without it ${v.tool} happens in ${pct(t.p_without)} of replays instead of ${pct(t.p_with)} (${signed(t.effect)} [${signed(t.ci[0])}, ${signed(t.ci[1])}], n = ${t.n}).`;
  }
  const joint = v.candidates.filter((c) => c.status === "joint");
  if (joint.length) return `${joint.map((c) => c.intervention).join(" + ")} matter only together: each is enough on its own.`;
  const untrustedOnly = v.provenance.find((p) => p.status === "untrusted-only");
  const tested = v.candidates.filter((c) => c.test);
  if (tested.length && tested.every((c) => c.status === "ruled-out" || c.status === "no-effect-seen")) {
    return `Every tested input was ruled out (${tested.length} tested): ${v.tool} does not depend on them.`;
  }
  if (untrustedOnly) {
    return `${v.tool} used ${short(untrustedOnly.value, 120)}, which only ${untrustedOnly.sources.map((s) => s.label).join(", ")} supplied. Not tested yet: run Find the cause to confirm.`;
  }
  if (reached) return `${reached} untrusted input${reached === 1 ? "" : "s"} reached ${v.tool}. Reach is not cause: run Find the cause to test them.`;
  return `No untrusted input reached ${v.tool}.`;
}

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
function alertsOf(m: RunModel, reach: UntrustedReach, views: Map<string, ActionView>, reachNamed = Infinity): Alert[] {
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
  const ev = (m.start.meta)?.evidence_alerts;
  if (Array.isArray(ev)) {
    for (const e of ev as Record<string, unknown>[]) {
      out.push({ severity: "high", rule: "evidence", title: safeText(e?.title ?? "Evidence problem", 200), detail: safeText(e?.detail ?? "", 2000), seq: null, tool: null });
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
      out.push({ ...base, severity: "high", rule: "blocked", title: `${a.tool} was blocked by ${by}`, detail: safeText(a.guard?.reason ?? ""), evidence: bad[0]?.sources });
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

/** Suggested target for tests of a call: its tool, plus its first untrusted-only value or address. */
/**
 * A target naming a call, for tests of it: its tool plus the value only untrusted content
 * supplied, else an address or URL among its arguments, else its scalar arguments themselves (as
 * `"key":value` clauses), so that "did it happen again" means this call, not any call of the tool.
 */
export function suggestTargetFor(tool: string, args: unknown, prov: ProvenanceRow[]): string {
  const safe = (x: string) => !/[,=~]/.test(x);
  let pick = prov.find((p) => p.status === "untrusted-only")?.value;
  if (pick === undefined) pick = tracedValues(args).map((v) => v.value).find((v) => EMAIL_FULL.test(v) || /^https?:\/\//.test(v));
  if (pick && safe(pick)) return `tool=${tool},arg~${pick}`;
  const clauses: string[] = [];
  if (args && typeof args === "object" && !Array.isArray(args)) {
    for (const [k, v] of Object.entries(args)) {
      if (v === null || typeof v === "object") continue;
      const text = canonical({ [k]: v }).slice(1, -1);
      if (safe(text) && text.length <= 80) clauses.push(`arg~${text}`);
      if (clauses.length === 3) break;
    }
  }
  return [`tool=${tool}`, ...clauses].join(",");
}

function seconds(ts: unknown): number | null {
  if (typeof ts !== "string" || ts.length < 19) return null;
  const t = Date.parse(ts.slice(0, 19) + "Z");
  if (Number.isNaN(t)) return null;
  const frac = /^\.(\d+)/.exec(ts.slice(19));
  return t / 1000 + (frac ? Number("0." + frac[1]) : 0);
}

function timeline(m: RunModel, alertSeqs: Set<number>): TimelineRow[] {
  let t0: number | null = null;
  return m.events.map((e) => {
    const sec = seconds(e.ts);
    if (t0 === null && sec !== null) t0 = sec;
    let text: string;
    switch (e.type) {
      case "run.start":
        text = `Run started (${e.program || "unnamed program"})`;
        break;
      case "agent.start":
        text = `${e.agent} joined${e.parent ? `, spawned by ${e.parent}` : ""}${e.role ? ` (${e.role})` : ""}`;
        break;
      case "input":
        text = e.kind === "task" ? "Task: " + short(m.value(e.ref), 120) : `${e.agent} read ${e.source}`;
        break;
      case "decision":
        text = `${e.agent} called ${e.model} to ${e.purpose || "decide"} using ${Array.isArray(e.context) ? e.context.length : 0} inputs`;
        break;
      case "action":
        text = `${e.agent} ran ${e.tool}(${short(m.value(e.args_ref), 70)})`;
        break;
      case "message":
        text = `${e.agent} sent a message to ${e.to}`;
        break;
      case "run.end":
        text = "Run finished";
        break;
      default:
        text = safeText(e.type);
    }
    const flags: string[] = [];
    if (e.trust === "untrusted") flags.push("untrusted");
    if (e.sensitive === true) flags.push("sensitive");
    if (e.status === "error") flags.push("error");
    if (e.mode === "stub") flags.push("stub");
    if (e.status === "blocked") flags.push("blocked");
    if (alertSeqs.has(e.seq)) flags.push("alert");
    const u = e.usage as { input_tokens?: unknown } | null | undefined;
    const usage = u && typeof u === "object" && typeof u.input_tokens === "number" ? (u as TimelineRow["usage"]) : null;
    return {
      seq: e.seq,
      id: safeText(e.id),
      node: ["input", "decision", "action", "message"].includes(e.type) ? nodeId(e.id) : null,
      line: e.line,
      type: safeText(e.type),
      agent: safeText(e.agent),
      t_ms: sec !== null && t0 !== null ? Math.round((sec - t0) * 100000) / 100 : 0,
      duration_ms: typeof e.duration_ms === "number" ? e.duration_ms : null,
      text,
      trust: (e.trust as string | undefined) ?? null,
      status: (e.status as string | undefined) ?? null,
      sensitive: e.sensitive === true,
      mode: (e.mode as string | undefined) ?? null,
      usage,
      flags,
      site: e.site,
    };
  });
}

function summaryOf(m: RunModel, al: Alert[], whole: RunData): RunSummary {
  const errors = m.run.problems.filter((p) => p.severity === "error");
  const usage = { input_tokens: 0, output_tokens: 0 };
  for (const d of m.decisions) {
    usage.input_tokens += Number(d.usage?.input_tokens ?? 0) || 0;
    usage.output_tokens += Number(d.usage?.output_tokens ?? 0) || 0;
  }
  const task = m.task();
  const counts = { high: 0, review: 0, info: 0 } as Record<Severity, number>;
  for (const a of al) counts[a.severity]++;
  const finished = m.events.length > 0 && m.events[m.events.length - 1].type === "run.end";
  const top = al[0];
  return {
    run_id: m.runId,
    dir: m.run.dir,
    program: safeText(m.start.program ?? ""),
    started: safeText(m.events[0]?.ts ?? ""),
    task: task === undefined ? null : textOf(task),
    agents: [...new Set(m.events.filter((e) => e.type === "agent.start").map((e) => safeText(e.agent)))].sort(),
    decisions: m.decisions.length,
    actions: m.actions.length,
    messages: m.messages.length,
    inputs: m.inputs.filter((e) => e.kind !== "task").length,
    untrusted_inputs: m.inputs.filter((e) => e.trust === "untrusted").length,
    events: m.events.length,
    errors: [...m.actions, ...m.decisions].filter((e) => e.status === "error").length,
    model_ms: Math.round(m.decisions.reduce((s, d) => s + (Number(d.duration_ms) || 0), 0) * 100) / 100,
    tool_ms: Math.round(m.actions.reduce((s, a) => s + (Number(a.duration_ms) || 0), 0) * 100) / 100,
    usage,
    tests: m.run.tests.length,
    confirmed_causes: m.run.tests.filter((t) => t.verdict === "causal" && !t.group && !safeText(t.intervention ?? "").includes(" | ")).length,
    ...(whole.tests.length > m.run.tests.length ? { foreign_tests: whole.tests.length - m.run.tests.length } : {}),
    ...(whole.writer !== undefined && whole.writer !== "local" ? { writer: whole.writer === null ? null : safeText(whole.writer) } : {}),
    alerts: counts,
    integrity: errors.length ? "failed" : "ok",
    status: errors.length ? "failed" : m.run.complete ? "intact" : "running",
    problems: m.run.problems.length,
    first_problem: errors[0] ?? null,
    tools_run: m.actions.map((a) => safeText(a.tool)),
    replayable: !!m.start.program,
    finished,
    blocked: m.actions.filter((a) => a.status === "blocked").length,
    guard: (m.start.guard as { mode?: string } | null | undefined)?.mode ?? null,
    top_alert: top ? { severity: top.severity, title: top.title, seq: top.seq, tool: top.tool } : null,
  };
}

function matrixOf(tests: TestSummary[]): Matrix {
  const rows: string[] = [];
  const cols: string[] = [];
  const cells: Record<string, TestSummary> = {};
  for (const t of tests) {
    if ((t.scope ?? "run") !== "run") continue;
    if (!rows.includes(t.intervention)) rows.push(t.intervention);
    if (!cols.includes(t.target)) cols.push(t.target);
    cells[`${t.intervention}||${t.target}`] = t;
  }
  return { rows, cols, cells };
}

function channelsOf(m: RunModel, g: Graph, tests: TestSummary[]): ChannelRow[] {
  const chans = new Map<string, ChannelRow>();
  for (const e of m.messages) {
    const key = `${e.agent}->${e.to}`;
    const c = chans.get(key) ?? { channel: key, from: safeText(e.agent), to: safeText(e.to), sent: 0, used: 0, tests: [] };
    chans.set(key, c);
    c.sent++;
    if (g.outEdges(nodeId(e.id), ["observed"]).length) c.used++;
  }
  for (const t of tests) {
    if (!t.group && t.intervention.startsWith("msg:") && chans.has(t.intervention.slice(4))) chans.get(t.intervention.slice(4))!.tests.push(t);
  }
  return [...chans.values()];
}

function agentsOf(m: RunModel): AgentRow[] {
  const rows = new Map<string, AgentRow>();
  const row = (name: string) => {
    let r = rows.get(name);
    if (!r) {
      r = { agent: name, role: "", parent: null, inputs: 0, decisions: 0, actions: 0, sent: 0, received: 0, tokens: 0, model_ms: 0 };
      rows.set(name, r);
    }
    return r;
  };
  for (const e of m.events) {
    if (e.type === "agent.start") {
      const r = row(safeText(e.agent));
      r.role = safeText(e.role ?? "");
      r.parent = (e.parent as string | null) ?? null;
    } else if (e.type === "input" && e.agent !== "run") row(safeText(e.agent)).inputs++;
    else if (e.type === "decision") {
      const r = row(safeText(e.agent));
      r.decisions++;
      const u = e.usage as { input_tokens?: unknown; output_tokens?: unknown } | null | undefined;
      r.tokens += (Number(u?.input_tokens) || 0) + (Number(u?.output_tokens) || 0);
      r.model_ms += Number(e.duration_ms) || 0;
    } else if (e.type === "action") row(safeText(e.agent)).actions++;
    else if (e.type === "message") {
      row(safeText(e.agent)).sent++;
      row(safeText(e.to)).received++;
    }
  }
  for (const r of rows.values()) r.model_ms = Math.round(r.model_ms * 100) / 100;
  return [...rows.values()];
}

const COMMON_FIELDS = new Set(["schema", "seq", "id", "prev_hash", "ts", "run_id", "agent", "type", "hash", "line"]);

function eventViews(m: RunModel, g: Graph): EventView[] {
  const byLine = new Map<number, string[]>();
  for (const p of m.run.problems) if (p.line !== undefined && (p.file ?? "events.jsonl") !== "tests.jsonl") byLine.set(p.line, [...(byLine.get(p.line) ?? []), p.message]);
  return m.events.map((e) => {
    const fields: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(e)) if (!COMMON_FIELDS.has(k)) fields[k] = v;
    const n = typeof e.id === "string" ? nodeId(e.id) : "";
    return {
      seq: e.seq,
      line: e.line,
      id: safeText(e.id),
      type: safeText(e.type),
      agent: safeText(e.agent),
      ts: safeText(e.ts),
      hash: safeText(e.hash),
      prev_hash: safeText(e.prev_hash),
      fields,
      from: g.nodes.has(n) ? g.inEdges(n, ["observed"]).map((x) => x.src) : [],
      to: g.nodes.has(n) ? g.outEdges(n, ["observed"]).map((x) => x.dst) : [],
      problems: byLine.get(e.line) ?? [],
    };
  });
}

/** Pretty text of every blob the run names, cut at `limit` characters. */
function blobPreviews(m: RunModel, limit: number, max: number): Record<string, BlobPreview> {
  const out: Record<string, BlobPreview> = {};
  const refs: string[] = [];
  for (const e of m.events) {
    for (const k of ["ref", "output", "args_ref", "result_ref"]) if (typeof e[k] === "string") refs.push(e[k]);
  }
  let n = 0;
  for (const ref of refs) {
    if (ref in out) continue;
    if (n++ >= max) break;
    const r = m.run.blobs.get(ref);
    if (!r.ok) {
      out[ref] = { text: "", bytes: 0, truncated: false, problem: r.message };
      continue;
    }
    let text: string;
    try {
      text = typeof r.value === "string" ? r.value : JSON.stringify(JSON.parse(r.canonical), null, 2);
    } catch {
      text = r.canonical;
    }
    out[ref] = { text: text.length > limit ? text.slice(0, limit) : text, bytes: r.bytes, truncated: text.length > limit };
  }
  return out;
}

export interface InvestigateOptions extends GraphOptions {
  /** Characters of each blob's text embedded (default 4000). */
  previewChars?: number;
  /** Most blobs embedded (default 5000). */
  maxBlobs?: number;
}

/** Everything the investigator needs for one run (tests written by others listed, not counted). */
export function investigate(whole: RunData, opts: InvestigateOptions = {}): Investigation {
  const run = countedRun(whole);
  const m = new RunModel(run);
  const g = buildGraph(m, opts);
  const prov = new ProvenanceIndex(m);
  const idx = new TestIndex(m, g);
  const reach = new UntrustedReach(m);
  const up = new Upstream(m, g);
  const views = new Map<string, ActionView>();
  for (const a of m.actions) views.set(nodeId(a.id), actionView(m, g, prov, idx, up, reach, a));
  const al = alertsOf(m, reach, views, REACH_NAMED);
  const bySeq = new Map<number, Severity[]>();
  for (const x of al) if (x.seq !== null) bySeq.set(x.seq, [...(bySeq.get(x.seq) ?? []), x.severity]);
  for (const v of views.values()) v.alerts = bySeq.get(v.seq) ?? [];
  attachCauseDetails(m, views, run.tests);
  for (const [id, ts] of foreignByAction(m, whole.tests)) {
    const v = views.get(nodeId(id));
    if (v) v.foreignTests = ts.map(testSummary);
  }
  const tests = run.tests.map(testSummary);
  const cp = criticalPath(g);
  return {
    schema: "causeway.investigation.v1",
    summary: summaryOf(m, al, whole),
    alerts: al,
    timeline: timeline(m, new Set(al.filter((x) => x.severity !== "info" && x.seq !== null).map((x) => x.seq!))),
    graph: g.toJSON(),
    actions: Object.fromEntries(views),
    matrix: matrixOf(tests),
    channels: channelsOf(m, g, tests),
    agents: agentsOf(m),
    criticalPath: cp,
    unusedMessages: m.messages
      .filter((e) => !g.outEdges(nodeId(e.id), ["observed"]).length)
      .map((e) => ({ from: safeText(e.agent), to: safeText(e.to), seq: e.seq, node: nodeId(e.id) })),
    problems: run.problems,
    tests: whole === run ? tests : whole.tests.map(testSummary),
    events: eventViews(m, g),
    blobs: blobPreviews(m, opts.previewChars ?? 4000, opts.maxBlobs ?? 5000),
  };
}

function actionView(m: RunModel, g: Graph, prov: ProvenanceIndex, idx: TestIndex, up: Upstream, reach: UntrustedReach, a: ActionEvent & { line?: number }): ActionView {
  const v = viewOf(m, prov, a);
  v.target = suggestTargetFor(a.tool, m.lossless(a.args_ref), v.provenance);
  v.args = m.canonical(a.args_ref);
  v.result = m.canonical(a.result_ref);
  const c = candidates(m, g, idx, up, a);
  v.candidates = c.rows;
  if (c.total > c.rows.length) v.candidatesTotal = c.total;
  v.verdict = verdictSentence(v, reach.of(a.id).length);
  return v;
}

/** The fields of a call's view every caller needs; the rest start empty. */
function viewOf(m: RunModel, prov: ProvenanceIndex, a: ActionEvent & { line?: number }): ActionView {
  const provenance = prov.forAction(a);
  return {
    node: nodeId(a.id),
    seq: a.seq,
    line: (a as unknown as LoadedEvent).line,
    agent: a.agent,
    tool: a.tool,
    site: a.site,
    args: "",
    result: "",
    status: a.status,
    mode: a.mode,
    sensitive: sensitivity(m, a),
    blocked: a.status === "blocked",
    decision: a.decision ? nodeId(a.decision) : null,
    provenance,
    candidates: [],
    target: `tool=${a.tool}`,
    verdict: "",
    alerts: [],
  };
}

/** Alerts only (what `causeway alerts` prints): the graph without inferred edges. */
export function alertsFor(run: RunData): Alert[] {
  return investigateLite(run).alerts;
}

/**
 * Summary and alerts, without the timeline, events and blob previews (for lists of runs, alert
 * lists and diagnostics). Linear in the run: no graph is built unless the run has tests whose
 * causes the alerts must name. An untrusted-reach alert names every source, as the reference's
 * (`causeway alerts`), unless `reachNamed` caps them (lists and diagnostics: {@link REACH_NAMED}).
 */
export function investigateLite(whole: RunData, opts: { reachNamed?: number } = {}): { summary: RunSummary; alerts: Alert[] } {
  const run = countedRun(whole);
  const m = new RunModel(run);
  const prov = new ProvenanceIndex(m);
  const tested = run.tests.some((t) => (t.scope ?? "run") === "run");
  const g = tested ? buildGraph(m, { infer: false, reuse: false }) : null;
  const idx = g ? new TestIndex(m, g) : null;
  const up = g ? new Upstream(m, g) : null;
  const views = new Map<string, ActionView>();
  for (const a of m.actions) views.set(nodeId(a.id), liteView(m, g, prov, idx, up, a));
  const al = alertsOf(m, new UntrustedReach(m), views, opts.reachNamed);
  return { summary: summaryOf(m, al, whole), alerts: al };
}

/** What the alerts need of a call: provenance, sensitivity, a target, and (with tests) its candidates. */
function liteView(m: RunModel, g: Graph | null, prov: ProvenanceIndex, idx: TestIndex | null, up: Upstream | null, a: ActionEvent & { line?: number }): ActionView {
  const v = viewOf(m, prov, a);
  if (v.sensitive) v.target = suggestTargetFor(a.tool, m.lossless(a.args_ref), v.provenance);
  if (g && idx && up && v.sensitive) v.candidates = candidates(m, g, idx, up, a).rows;
  return v;
}

/** The JSON shape `causeway alerts --json` prints. */
export function alertRecord(a: Alert): { severity: Severity; rule: string; title: string; detail: string; seq: number | null; tool: string | null } {
  return { severity: a.severity, rule: a.rule, title: a.title, detail: a.detail, seq: a.seq, tool: a.tool };
}
