/** What happened, in order: the timeline rows, the raw event views and the blob previews of a run. */
import { safeText } from "../log/sanitize";
import { nodeId, type Graph } from "../graph/graph";
import type { RunModel } from "../graph/model";
import { short } from "./one-line";
import type { BlobPreview, EventView, TimelineRow } from "./types";

function seconds(ts: unknown): number | null {
  if (typeof ts !== "string" || ts.length < 19) return null;
  const t = Date.parse(ts.slice(0, 19) + "Z");
  if (Number.isNaN(t)) return null;
  const frac = /^\.(\d+)/.exec(ts.slice(19));
  return t / 1000 + (frac ? Number("0." + frac[1]) : 0);
}

export function timeline(m: RunModel, alertSeqs: Set<number>): TimelineRow[] {
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

const COMMON_FIELDS = new Set(["schema", "seq", "id", "prev_hash", "ts", "run_id", "agent", "type", "hash", "line"]);

export function eventViews(m: RunModel, g: Graph): EventView[] {
  const byLine = new Map<number, string[]>();
  for (const p of m.run.problems)
    if (p.line !== undefined && (p.file ?? "events.jsonl") !== "tests.jsonl") byLine.set(p.line, [...(byLine.get(p.line) ?? []), p.message]);
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
export function blobPreviews(m: RunModel, limit: number, max: number): Record<string, BlobPreview> {
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
