/**
 * One tool call's view: its provenance, sensitivity, suggested test target, candidate causes and
 * the one-sentence verdict on it.
 */
import { safeText } from "../log/sanitize";
import type { ActionEvent, LoadedEvent } from "../log/events";
import { nodeId, type Graph } from "../graph/graph";
import type { RunModel } from "../graph/model";
import { canonical } from "../log/hash";
import { pct, signed } from "../util/numbers";
import type { ProvenanceIndex } from "./provenance";
import type { UntrustedReach } from "./reach";
import { SENSITIVE_NAME_RE, argumentStrings, tracedValues } from "./values";
import { candidates } from "./candidates";
import type { TestIndex } from "./test-records";
import type { Upstream } from "./upstream";
import { short } from "./one-line";
import type { ActionView, ProvenanceRow } from "./types";

const EMAIL_FULL = /^[\w.+-]+@[\w-]+(?:\.[\w-]+)+$/;

/** "declared" when the run marked the call sensitive; "by name" when the run declares none and the name suggests it. */
export function sensitivity(m: RunModel, a: ActionEvent): "declared" | "by name" | null {
  if (a.sensitive === true) return "declared";
  if (!m.sensitiveDeclared() && SENSITIVE_NAME_RE.test(safeText(a.tool ?? ""))) return "by name";
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

/**
 * The untrusted-only value a target should name: one that is a whole argument (the recipient the
 * call acts on) before one only quoted inside a longer text (an address in an e-mail's body).
 */
function untrustedPick(args: unknown, prov: ProvenanceRow[]): string | undefined {
  const rows = prov.filter((p) => p.status === "untrusted-only");
  if (rows.length < 2) return rows[0]?.value;
  // the string at each path (the first, where two keys spell the same path)
  const fields = new Map<string, string>();
  for (const f of argumentStrings(args)) if (!fields.has(f.path)) fields.set(f.path, f.text);
  const whole = rows.find((r) => fields.get(r.path)?.trim().toLowerCase() === r.value.toLowerCase());
  return (whole ?? rows[0]).value;
}

/**
 * A target naming a call, for tests of it: its tool plus the value only untrusted content
 * supplied, else an address or URL among its arguments, else its scalar arguments themselves (as
 * `"key":value` clauses), so that "did it happen again" means this call, not any call of the tool.
 */
export function suggestTargetFor(tool: string, args: unknown, prov: ProvenanceRow[]): string {
  const safe = (x: string) => !/[,=~]/.test(x);
  let pick = untrustedPick(args, prov);
  if (pick === undefined)
    pick = tracedValues(args)
      .map((v) => v.value)
      .find((v) => EMAIL_FULL.test(v) || /^https?:\/\//.test(v));
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

export function actionView(
  m: RunModel,
  g: Graph,
  prov: ProvenanceIndex,
  idx: TestIndex,
  up: Upstream,
  reach: UntrustedReach,
  a: ActionEvent & { line?: number },
): ActionView {
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

/** What the alerts need of a call: provenance, sensitivity, a target, and (with tests) its candidates. */
export function liteView(
  m: RunModel,
  g: Graph | null,
  prov: ProvenanceIndex,
  idx: TestIndex | null,
  up: Upstream | null,
  a: ActionEvent & { line?: number },
): ActionView {
  const v = viewOf(m, prov, a);
  if (v.sensitive) v.target = suggestTargetFor(a.tool, m.lossless(a.args_ref), v.provenance);
  if (g && idx && up && v.sensitive) v.candidates = candidates(m, g, idx, up, a).rows;
  return v;
}
