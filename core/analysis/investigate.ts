/**
 * Analysis of one run, assembled into one plain {@link Investigation}: what happened (alerts.ts,
 * timeline.ts, run-summary.ts), why (upstream.ts, candidates.ts, action-view.ts, provenance.ts)
 * and whether that is really why (test-records.ts). Everything is derived from the log and the
 * tests recorded against it; nothing calls a model.
 */
import { safeText } from "../log/sanitize";
import type { RunData } from "../log/reader";
import { buildGraph, criticalPath, nodeId, type GraphOptions } from "../graph/graph";
import { RunModel } from "../graph/model";
import { ProvenanceIndex } from "./provenance";
import { attachCauseDetails } from "./causes";
import { countedRun, foreignByAction } from "./foreign";
import { recordedChains } from "./chains";
import { recordedNotTested } from "./not-tested";
import { UntrustedReach } from "./reach";
import { actionView, liteView } from "./action-view";
import { alertsOf, REACH_NAMED } from "./alerts";
import { matrixOf, TestIndex, testSummary } from "./test-records";
import { Upstream } from "./upstream";
import { agentsOf, channelsOf, summaryOf } from "./run-summary";
import { blobPreviews, eventViews, timeline } from "./timeline";
import type { ActionView, Alert, Investigation, RunSummary, Severity } from "./types";

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
  for (const [id, c] of recordedChains(m, whole.tests)) {
    const v = views.get(nodeId(id));
    if (v) Object.assign(v, c);
  }
  for (const [id, nt] of recordedNotTested(m, whole.tests)) {
    const v = views.get(nodeId(id));
    if (v) v.notTested = nt;
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
