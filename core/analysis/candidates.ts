/**
 * Why, part two: the candidate causes of a call — every upstream input and message channel with
 * the status its tests give it, best first.
 */
import type { ActionEvent } from "../log/events";
import type { Graph } from "../graph/graph";
import type { Bits } from "../graph/closure";
import type { RunModel } from "../graph/model";
import { copiedFrom, specificValues } from "../graph/copied";
import { causalRole, settled, type TestIndex } from "./test-records";
import type { Upstream } from "./upstream";
import type { Candidate, CandidateStatus, TestSummary } from "./types";

/** Untested candidates listed per call beyond the tested ones (a call deep in a big run has thousands upstream). */
export const CANDIDATES_MAX = 20;

/**
 * The candidate causes of a call: every upstream input and message channel with its test status,
 * best first. Untested ones past {@link CANDIDATES_MAX} are left off (tested ones never are);
 * `total` counts them all.
 */
export function candidates(m: RunModel, g: Graph, idx: TestIndex, up: Upstream, a: ActionEvent): { rows: Candidate[]; total: number } {
  const hit = up.of(a);
  const mine = idx.runTests.filter((x) => x.hits.has(a.id));
  // no test names this call: its rows are those of every call of the same model call
  const c = mine.length ? candidateRows(idx, up, hit.anc, mine) : (hit.untested ??= candidateRows(idx, up, hit.anc, mine));
  const kept = c.rows.map((r) => ({ ...r }));
  const callValues = specificValues(m.value(a.args_ref));
  for (const r of kept) r.copied = copiedFrom(m.value(m.byId.get(g.nodes.get(r.node)!.eventId)!.ref), callValues);
  return { rows: kept, total: c.total };
}

const STATUS_ORDER: Record<CandidateStatus, number> = {
  primary: 0,
  confirmed: 1,
  contributing: 2,
  joint: 3,
  suppressive: 4,
  inconclusive: 5,
  untested: 6,
  "no-effect-seen": 7,
  "ruled-out": 8,
};

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
      const joint = mine.some(
        (x) =>
          x.t.group &&
          x.t.verdict === "causal" &&
          x.t.group.includes(spec) &&
          x.t.group.every((member) => !mine.some((y) => y.t.intervention === member && y.t.verdict === "causal")) &&
          x.t.group.some((member) => mine.some((y) => y.t.intervention === member)),
      );
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
