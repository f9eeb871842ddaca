/**
 * What the code lenses say: for each source line where an SDK call (act, decide, observe, send)
 * recorded events, how many runs hit it, its alerts, and a tested cause with its effect.
 * "send_email · 5 runs · 1 high · cause: vendor:portal/notes.md +0.80".
 */
import type { Alert, Severity } from "../../core/analysis/types";
import type { RunAnalysis } from "./analysis";
import { oneLine } from "./diagnostics";
import type { SiteResolver } from "./sites";
import { signed } from "../../core/format";

/** The SDK call behind an event type. */
export const CALL_OF: Record<string, "act" | "decide" | "observe" | "send"> = { action: "act", decision: "decide", input: "observe", message: "send" };

export interface LensItem {
  /** act | decide | observe | send */
  call: "act" | "decide" | "observe" | "send";
  /** The tool for act; else every label seen (purposes, sources, recipients). */
  tool?: string;
  labels: string[];
  runs: Set<string>;
  events: number;
  alerts: Record<Severity, number>;
  cause: NonNullable<Alert["cause"]> | null;
  /** Where a click goes: the run and event with the worst alert, else the first hit. */
  focus: { run: string; seq: number };
  /** The worst alert's rank (0 high … 3 none), for ordering. */
  worst: number;
}

/** Lens items by absolute file, then by 1-based line. */
export type SiteIndex = Map<string, Map<number, LensItem[]>>;

const RANK: Record<Severity, number> = { high: 0, review: 1, info: 2 };

export function buildSiteIndex(runs: readonly { dir: string; analysis: RunAnalysis }[], resolver: SiteResolver): SiteIndex {
  const index: SiteIndex = new Map();
  for (const { dir, analysis } of runs) {
    const bySeq = new Map<number, Alert[]>();
    for (const a of analysis.alerts) if (a.seq !== null) bySeq.set(a.seq, [...(bySeq.get(a.seq) ?? []), a]);
    for (const hit of analysis.sites) {
      const call = CALL_OF[hit.type];
      if (!call) continue;
      const s = resolver.resolve(hit.file, dir, analysis.program);
      if (!s) continue;
      let lines = index.get(s.file);
      if (!lines) index.set(s.file, (lines = new Map()));
      let items = lines.get(hit.line);
      if (!items) lines.set(hit.line, (items = []));
      const tool = call === "act" ? hit.tool ?? hit.label : undefined;
      let item = items.find((i) => i.call === call && i.tool === tool);
      if (!item) {
        item = { call, tool, labels: [], runs: new Set(), events: 0, alerts: { high: 0, review: 0, info: 0 }, cause: null, focus: { run: dir, seq: hit.seq }, worst: 3 };
        items.push(item);
      }
      item.runs.add(dir);
      item.events++;
      if (hit.label && !item.labels.includes(hit.label) && item.labels.length < 20) item.labels.push(hit.label);
      for (const a of bySeq.get(hit.seq) ?? []) {
        item.alerts[a.severity]++;
        if (RANK[a.severity] < item.worst) {
          item.worst = RANK[a.severity];
          item.focus = { run: dir, seq: hit.seq };
        }
        if (a.cause && (!item.cause || a.cause.effect > item.cause.effect)) item.cause = a.cause;
      }
    }
  }
  for (const lines of index.values()) for (const items of lines.values()) items.sort(compareItems);
  return index;
}

function compareItems(a: LensItem, b: LensItem): number {
  return a.worst - b.worst || b.runs.size - a.runs.size || (a.tool ?? a.call).localeCompare(b.tool ?? b.call);
}


function plural(n: number, one: string, many = one + "s"): string {
  return `${n} ${n === 1 ? one : many}`;
}

function list(labels: string[], max = 2): string {
  return labels.slice(0, max).join(", ") + (labels.length > max ? ` +${labels.length - max}` : "");
}

/** The lens text of one item. */
export function lensTitle(item: LensItem): string {
  let head: string;
  switch (item.call) {
    case "act":
      head = item.tool ?? "act";
      break;
    case "decide":
      head = `decide (${list(item.labels) || "model"})`;
      break;
    case "observe":
      head = item.labels.length > 1 ? `observe · ${plural(item.labels.length, "source")}` : `observe ${item.labels[0] ?? ""}`.trim();
      break;
    case "send":
      head = `send → ${list(item.labels) || "?"}`;
      break;
  }
  const parts = [oneLine(head, 80), plural(item.runs.size, "run")];
  for (const s of ["high", "review", "info"] as const) if (item.alerts[s]) parts.push(`${item.alerts[s]} ${s}`);
  if (item.cause) parts.push(`cause: ${oneLine(item.cause.intervention.replace(/^input:/, ""), 60)} ${signed(item.cause.effect)}`);
  return parts.join(" · ");
}

/** The hover text of a lens: plain text. */
export function lensTooltip(item: LensItem): string {
  const lines = [`${item.events} event${item.events === 1 ? "" : "s"} recorded here by ${item.call}() in ${plural(item.runs.size, "run")}.`];
  if (item.cause) lines.push(`Tested cause: ${item.cause.intervention} ${signed(item.cause.effect)} [${signed(item.cause.ci[0])}, ${signed(item.cause.ci[1])}], n = ${item.cause.n}.`);
  lines.push("Click to open it in the investigator.");
  return oneLine(lines.join(" "), 500);
}
