/**
 * What the code lenses say: for each source line where an SDK call (act, decide, observe, send)
 * recorded events, how many runs hit it, its alerts, and a tested cause with its effect.
 * "send_email · 5 runs · 1 high · cause: vendor:portal/notes.md +0.80".
 */
import type { Alert, Severity } from "../../core/analysis/types";
import type { RunAnalysis } from "./analysis";
import { oneLine } from "./diagnostics";
import type { SiteResolver } from "./sites";
import { signed } from "../../core/util/numbers";
import { count, t } from "./l10n";

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
      const tool = call === "act" ? (hit.tool ?? hit.label) : undefined;
      let item = items.find((i) => i.call === call && i.tool === tool);
      if (!item) {
        item = {
          call,
          tool,
          labels: [],
          runs: new Set(),
          events: 0,
          alerts: { high: 0, review: 0, info: 0 },
          cause: null,
          focus: { run: dir, seq: hit.seq },
          worst: 3,
        };
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

const runs = (n: number) => count(n, "{0} run", "{0} runs");

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
      head = t("decide ({0})", list(item.labels) || t("model"));
      break;
    case "observe":
      head =
        item.labels.length > 1 ? t("observe · {0}", count(item.labels.length, "{0} source", "{0} sources")) : t("observe {0}", item.labels[0] ?? "").trim();
      break;
    case "send":
      head = t("send → {0}", list(item.labels) || "?");
      break;
  }
  const parts = [oneLine(head, 80), runs(item.runs.size)];
  for (const s of ["high", "review", "info"] as const)
    if (item.alerts[s])
      parts.push(s === "high" ? t("{0} high", item.alerts[s]) : s === "review" ? t("{0} review", item.alerts[s]) : t("{0} info", item.alerts[s]));
  if (item.cause) parts.push(t("cause: {0} {1}", oneLine(item.cause.intervention.replace(/^input:/, ""), 60), signed(item.cause.effect)));
  return parts.join(" · ");
}

/** The hover text of a lens: plain text. */
export function lensTooltip(item: LensItem): string {
  const lines = [t("{0} recorded here by {1}() in {2}.", count(item.events, "{0} event", "{0} events"), item.call, runs(item.runs.size))];
  if (item.cause)
    lines.push(
      t(
        "Tested cause: {0} {1} [{2}, {3}], n = {4}.",
        item.cause.intervention,
        signed(item.cause.effect),
        signed(item.cause.ci[0]),
        signed(item.cause.ci[1]),
        item.cause.n,
      ),
    );
  lines.push(t("Click to open it in the investigator."));
  return oneLine(lines.join(" "), 500);
}
