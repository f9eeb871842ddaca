/**
 * The runs tree as plain data: which nodes a run has (its agents, their events in order, its
 * problems) and how each is shown (label, description, codicon and theme colour, plain-text
 * tooltip, contextValue for menus). extension/runs-tree.ts turns these into vscode.TreeItems.
 */
import { safeText } from "../../core/log/sanitize";
import path from "node:path";
import type { Alert, RunSummary, Severity } from "../../core/analysis/types";
import type { LoadedEvent } from "../../core/log/events";
import type { RunData } from "../../core/log/reader";
import type { RunRow } from "../../core/store/types";
import type { RunEntry } from "./workspace-runs";
import { oneLine } from "./diagnostics";
import { count, t } from "./l10n";

export type TreeNode =
  /** A folder holding runs (shown when runs live in more than one folder). */
  | { kind: "folder"; dir: string }
  | { kind: "run"; dir: string }
  | { kind: "agent"; dir: string; agent: string }
  | { kind: "event"; dir: string; agent: string; seq: number }
  | { kind: "problems"; dir: string }
  | { kind: "problem"; dir: string; index: number };

export interface ItemSpec {
  id: string;
  label: string;
  description?: string;
  tooltip: string;
  icon: { id: string; color?: string };
  contextValue: string;
  collapsible: "none" | "collapsed" | "expanded";
  /** What a click does: reveal in the investigator, open events.jsonl at a line, or open a collector's run. */
  open?:
    | { kind: "reveal"; run: string; seq?: number; node?: string; action: boolean }
    | { kind: "line"; file: string; line: number }
    | { kind: "remote"; run: string };
}

/**
 * Runs a collector listed that are not opened yet (extension/collector.ts): shown from the
 * collector's runs table, opened (pulled, verified, cached) when expanded or clicked.
 */
export interface RemoteRuns {
  /** The folder listed runs open into (their folder in the tree), or undefined when not connected. */
  folder(): string | undefined;
  /** What the tree calls that folder. */
  label(): string;
  /** The listed runs not opened yet, by the folder each opens into. */
  listed(): ReadonlyMap<string, RunRow>;
  /** Opens a listed run into the run store; false when it could not (the reason is logged). */
  open(dir: string): Promise<boolean>;
}

export const CONTEXT = {
  folder: "causeway.folder",
  run: "causeway.run",
  remoteRun: "causeway.run.remote",
  runReplayable: "causeway.run.replayable",
  agent: "causeway.agent",
  action: "causeway.action",
  event: "causeway.event",
  problems: "causeway.problems",
  problem: "causeway.problem",
} as const;

const COLOR = {
  error: "problemsErrorIcon.foreground",
  warning: "problemsWarningIcon.foreground",
  info: "problemsInfoIcon.foreground",
  passed: "testing.iconPassed",
  running: "charts.blue",
  untrusted: "charts.orange",
};

export function nodeKey(n: TreeNode): string {
  switch (n.kind) {
    case "folder":
      return `folder:${n.dir}`;
    case "run":
      return `run:${n.dir}`;
    case "agent":
      return `agent:${n.dir}\0${n.agent}`;
    case "event":
      return `event:${n.dir}\0${n.seq}`;
    case "problems":
      return `problems:${n.dir}`;
    case "problem":
      return `problem:${n.dir}\0${n.index}`;
  }
}

/** The parent of a node below the runs (a run's parent depends on the grouping: see RunsTree). */
export function parentOf(n: TreeNode): TreeNode | undefined {
  switch (n.kind) {
    case "folder":
    case "run":
      return undefined;
    case "agent":
    case "problems":
      return { kind: "run", dir: n.dir };
    case "event":
      return { kind: "agent", dir: n.dir, agent: n.agent };
    case "problem":
      return { kind: "problems", dir: n.dir };
  }
}

const COUNTS = {
  run: ["{0} run", "{0} runs"],
  event: ["{0} event", "{0} events"],
  decision: ["{0} decision", "{0} decisions"],
  toolCall: ["{0} tool call", "{0} tool calls"],
  message: ["{0} message", "{0} messages"],
  input: ["{0} input", "{0} inputs"],
  error: ["{0} error", "{0} errors"],
  warning: ["{0} warning", "{0} warnings"],
  test: ["{0} test", "{0} tests"],
} as const;

function plural(n: number, what: keyof typeof COUNTS): string {
  return count(n, COUNTS[what][0], COUNTS[what][1]);
}

const SEVERITY_COUNT: Record<Severity, (n: number) => string> = {
  high: (n) => t("{0} high", n),
  review: (n) => t("{0} review", n),
  info: (n) => t("{0} info", n),
};

export function alertCounts(s: RunSummary["alerts"]): string {
  return (["high", "review", "info"] as const)
    .filter((k) => s[k])
    .map((k) => SEVERITY_COUNT[k](s[k]))
    .join(" · ");
}

function statusText(s: RunSummary["status"]): string {
  return s === "intact" ? t("intact") : s === "failed" ? t("failed verify") : t("running");
}

/** A runs folder's row: where it is, how many runs it holds and their high alerts. */
export function folderItem(dir: string, label: string, entries: readonly RunEntry[], listedOnly = 0): ItemSpec {
  let high = 0;
  let failed = 0;
  for (const e of entries) {
    high += e.analysis?.summary.alerts.high ?? 0;
    if (e.analysis?.summary.status === "failed") failed++;
  }
  const parts = [plural(entries.length + listedOnly, "run")];
  if (listedOnly) parts.push(t("{0} not opened", listedOnly));
  if (high) parts.push(t("{0} high", high));
  if (failed) parts.push(t("{0} failed verify", failed));
  return {
    id: nodeKey({ kind: "folder", dir }),
    label,
    description: parts.join(" · "),
    tooltip: `${dir}\n${parts.join(", ")}`,
    icon: { id: "folder" },
    contextValue: CONTEXT.folder,
    collapsible: "expanded",
  };
}

/** A run's row: its folder name, status icon, alert counts and program (and `where`, in a multi-root workspace). */
export function runItem(entry: RunEntry, opts: { where?: string } = {}): ItemSpec {
  const name = path.basename(entry.dir);
  const a = entry.analysis;
  const base = { id: nodeKey({ kind: "run", dir: entry.dir }), label: name, collapsible: "collapsed" as const };
  if (!a) {
    return {
      ...base,
      description: [entry.error ? t("could not be read") : t("reading…"), opts.where].filter(Boolean).join(" · "),
      tooltip: `${entry.dir}\n${entry.error ? t("The run could not be analysed; see the Causeway output.") : t("Reading and checking the run…")}`,
      icon: entry.error ? { id: "error", color: COLOR.error } : { id: "loading~spin" },
      contextValue: CONTEXT.run,
    };
  }
  const s = a.summary;
  const verifiedFailed = entry.verified && entry.verified.version === entry.version && !entry.verified.result.ok;
  const status = verifiedFailed ? "failed" : s.status;
  const icon =
    status === "failed"
      ? { id: "error", color: COLOR.error }
      : status === "running"
        ? { id: "sync~spin", color: COLOR.running }
        : { id: "verified", color: COLOR.passed };
  const desc = [statusText(status), alertCounts(s.alerts), s.program ? oneLine(s.program, 60) : t("no program")].filter(Boolean);
  if (opts.where) desc.push(opts.where);
  const tip = [
    `${s.run_id}  (${entry.dir})`,
    t("Status: {0}", statusText(status)) +
      (status === "failed" && (entry.verified?.result.first ?? s.first_problem)
        ? ` — ${oneLine((entry.verified?.result.first ?? s.first_problem)!.message, 300)}`
        : ""),
    s.program ? t("Program: {0}", s.program) : a.agentless ? t("Program: none recorded") : t("Program: none recorded (not replayable)"),
    t("Started: {0}", s.started || "?"),
    s.agents.length ? t("Agents: {0}", s.agents.join(", ")) : t("Agents: none"),
    t(
      "{0}: {1}, {2}, {3}, {4} ({5} untrusted)",
      plural(s.events, "event"),
      plural(s.decisions, "decision"),
      plural(s.actions, "toolCall"),
      plural(s.messages, "message"),
      plural(s.inputs, "input"),
      s.untrusted_inputs,
    ),
    t("Alerts: {0}", alertCounts(s.alerts) || t("none")),
    s.confirmed_causes ? t("Tests: {0} ({1})", s.tests, count(s.confirmed_causes, "{0} confirmed cause", "{0} confirmed causes")) : t("Tests: {0}", s.tests),
  ];
  if (a.agentless)
    tip.push(
      a.agentlessRung === 1
        ? t(
            "Replays without the program when it is not allowed (rung 1): the one recorded call that made the action re-sent to your endpoint, with and without each suspect",
          )
        : t("Replays without the program when it is not allowed (rung 2): the recorded model calls re-sent to your endpoint, tools from the recording"),
    );
  if (s.task) tip.push(t("Task: {0}", oneLine(s.task, 300)));
  if (s.top_alert) tip.push(t("Top alert: {0}", oneLine(s.top_alert.title, 300)));
  return {
    ...base,
    description: desc.join(" · "),
    tooltip: tip.join("\n"),
    icon,
    contextValue: s.program || a.agentless ? CONTEXT.runReplayable : CONTEXT.run,
    open: { kind: "reveal", run: entry.dir, action: false },
  };
}

/** A collector's run not opened yet: what its runs-table row says; expanding or clicking opens it. */
export function remoteRunItem(dir: string, row: RunRow): ItemSpec {
  const alerts = alertCounts(row.alerts);
  const desc = [t("on the collector"), row.status, alerts, row.program ? oneLine(row.program, 60) : t("no program")].filter(Boolean);
  return {
    id: nodeKey({ kind: "run", dir }),
    label: path.basename(dir),
    description: desc.join(" · "),
    tooltip: [
      t("{0}  (on the collector; expand or click to open it)", row.run_id),
      t("Status: {0}", row.status),
      t("Program: {0}", row.program || t("none recorded")),
      t("Started: {0}", row.started || "?"),
      `${plural(row.events, "event")}, ${plural(row.tests, "test")}`,
      t("Alerts: {0}", alerts || t("none")),
      t("Last update: {0}", row.updated),
    ].join("\n"),
    icon: { id: "cloud", color: row.alerts.high ? COLOR.error : undefined },
    contextValue: CONTEXT.remoteRun,
    collapsible: "collapsed",
    open: { kind: "remote", run: dir },
  };
}

/** A run's children: its problems (when it failed verify), then its agents in order of appearance. */
export function runChildren(dir: string, run: RunData, problems = run.problems): TreeNode[] {
  const out: TreeNode[] = [];
  if (problems.some((p) => p.severity === "error")) out.push({ kind: "problems", dir });
  const agents: string[] = [];
  for (const e of run.events) {
    const a = safeText(e.agent);
    if (!agents.includes(a)) agents.push(a);
  }
  for (const agent of agents) out.push({ kind: "agent", dir, agent });
  return out;
}

export function agentChildren(dir: string, run: RunData, agent: string): TreeNode[] {
  return run.events.filter((e) => safeText(e.agent) === agent).map((e) => ({ kind: "event" as const, dir, agent, seq: e.seq }));
}

export function agentItem(dir: string, run: RunData, agent: string, alerts: readonly Alert[]): ItemSpec {
  const evs = run.events.filter((e) => safeText(e.agent) === agent);
  const start = evs.find((e) => e.type === "agent.start");
  const typed = (type: string) => evs.filter((e) => e.type === type).length;
  const mine = alerts.filter((a) => a.agent === agent);
  const worst = worstOf(mine.map((a) => a.severity));
  const parts = agent === "run" ? [plural(evs.length, "event")] : [plural(typed("decision"), "decision"), plural(typed("action"), "toolCall")];
  const counts = countSeverities(mine.map((a) => a.severity));
  if (counts) parts.push(counts);
  return {
    id: nodeKey({ kind: "agent", dir, agent }),
    label: oneLine(agent, 80),
    description: parts.join(" · "),
    tooltip: [
      t("Agent {0}", oneLine(agent, 120)),
      start?.role ? t("Role: {0}", oneLine(safeText(start.role), 200)) : "",
      start?.parent ? t("Spawned by {0}", oneLine(safeText(start.parent), 120)) : "",
      t(
        "{0}, {1}, {2}, {3} sent",
        plural(typed("input"), "input"),
        plural(typed("decision"), "decision"),
        plural(typed("action"), "toolCall"),
        plural(typed("message"), "message"),
      ),
    ]
      .filter(Boolean)
      .join("\n"),
    icon: agent === "run" ? { id: "debug-start" } : worst ? severityIcon(worst) : { id: "person" },
    contextValue: CONTEXT.agent,
    collapsible: "collapsed",
  };
}

function worstOf(s: Severity[]): Severity | undefined {
  return s.includes("high") ? "high" : s.includes("review") ? "review" : s.includes("info") ? "info" : undefined;
}

function countSeverities(s: Severity[]): string {
  const c = { high: 0, review: 0, info: 0 };
  for (const x of s) c[x]++;
  return alertCounts(c);
}

function severityIcon(s: Severity): { id: string; color: string } {
  return s === "high" ? { id: "error", color: COLOR.error } : s === "review" ? { id: "warning", color: COLOR.warning } : { id: "info", color: COLOR.info };
}

function preview(run: RunData, ref: unknown, n = 80): string {
  if (typeof ref !== "string") return "";
  const r = run.blobs.get(ref);
  if (!r.ok) return t("(content unavailable)");
  return oneLine(typeof r.value === "string" ? r.value : r.canonical, n);
}

/** One event's row. `nodeId` maps an event id to the investigator's node id. */
export function eventItem(
  dir: string,
  run: RunData,
  e: LoadedEvent,
  alerts: readonly Alert[],
  problemsOnLine: readonly string[],
  nodeId: (id: string) => string,
): ItemSpec {
  const mine = alerts.filter((a) => a.seq === e.seq);
  const worst = worstOf(mine.filter((a) => a.rule !== "integrity").map((a) => a.severity));
  const tags: string[] = [];
  let label: string;
  let icon: { id: string; color?: string };
  let detail = "";
  switch (e.type) {
    case "run.start":
      label = t("run started");
      icon = { id: "debug-start" };
      tags.push(e.program ? oneLine(safeText(e.program), 60) : t("no program"));
      break;
    case "run.end":
      label = t("run finished");
      icon = { id: "debug-stop" };
      break;
    case "agent.start":
      label = t("joined");
      icon = { id: "person-add" };
      if (e.role) tags.push(oneLine(safeText(e.role), 60));
      break;
    case "input":
      label = e.kind === "task" ? t("task") : oneLine(safeText(e.source ?? "input"), 80);
      icon = e.trust === "untrusted" ? { id: "globe", color: COLOR.untrusted } : { id: "file-text" };
      tags.push(e.trust === "untrusted" ? t("untrusted") : t("trusted"));
      detail = preview(run, e.ref, 300);
      break;
    case "decision":
      label = e.purpose ? t("decide · {0}", oneLine(safeText(e.purpose), 40)) : t("decide");
      icon = e.status === "error" ? { id: "error", color: COLOR.warning } : { id: "lightbulb" };
      tags.push(`${oneLine(safeText(e.model ?? "?"), 40)}, ${plural(Array.isArray(e.context) ? e.context.length : 0, "input")}`);
      detail = preview(run, e.output, 300);
      break;
    case "action": {
      label = oneLine(safeText(e.tool ?? "tool"), 60);
      const blocked = e.status === "blocked";
      if (blocked) tags.push(t("blocked"));
      if (e.sensitive === true) tags.push(t("sensitive"));
      if (e.status === "error") tags.push(t("failed"));
      if (e.mode === "stub") tags.push(t("stubbed"));
      icon = worst
        ? severityIcon(worst)
        : blocked
          ? { id: "circle-slash", color: COLOR.error }
          : e.sensitive === true
            ? { id: "shield", color: COLOR.warning }
            : { id: "tools" };
      if (blocked && worst) icon = { id: "circle-slash", color: COLOR.error };
      tags.push(preview(run, e.args_ref, 70));
      detail = preview(run, e.args_ref, 300);
      break;
    }
    case "message":
      label = `→ ${oneLine(safeText(e.to ?? "?"), 60)}`;
      icon = { id: "comment" };
      detail = preview(run, e.ref, 300);
      break;
    default:
      label = oneLine(safeText(e.type), 60);
      icon = { id: "question" };
  }
  if (problemsOnLine.length) {
    icon = { id: "error", color: COLOR.error };
    tags.unshift(t("integrity problem"));
  }
  const counts = countSeverities(mine.filter((a) => a.rule !== "integrity").map((a) => a.severity));
  const description = [`#${e.seq}`, counts, ...tags].filter(Boolean).join(" · ");
  const tooltip = [
    t("{0} #{1} by {2} (events.jsonl line {3})", safeText(e.type), e.seq, oneLine(safeText(e.agent), 80), e.line),
    ...mine.map((a) => `[${a.severity}] ${oneLine(a.title, 200)}${a.detail ? ` — ${oneLine(a.detail, 300)}` : ""}`),
    ...problemsOnLine.map((p) => `[integrity] ${oneLine(p, 300)}`),
    detail ? t("Content: {0}", detail) : "",
    e.site && typeof e.site === "object"
      ? t("Recorded at {0}:{1}", oneLine(safeText((e.site as { file?: unknown }).file), 200), Number((e.site as { line?: unknown }).line))
      : "",
  ]
    .filter(Boolean)
    .join("\n");
  const isAction = e.type === "action";
  return {
    id: nodeKey({ kind: "event", dir, agent: safeText(e.agent), seq: e.seq }),
    label,
    description,
    tooltip,
    icon,
    contextValue: isAction ? CONTEXT.action : CONTEXT.event,
    collapsible: "none",
    open: { kind: "reveal", run: dir, seq: e.seq, node: typeof e.id === "string" ? nodeId(e.id) : undefined, action: isAction },
  };
}

export function problemsItem(dir: string, errors: number, warnings: number): ItemSpec {
  return {
    id: nodeKey({ kind: "problems", dir }),
    label: t("verify failed"),
    description: [errors ? plural(errors, "error") : "", warnings ? plural(warnings, "warning") : ""].filter(Boolean).join(", "),
    tooltip: t(
      "The log does not verify: events were edited, removed, re-ordered or cut off, or blobs are missing or forged. The intact events are still listed.",
    ),
    icon: { id: "error", color: COLOR.error },
    contextValue: CONTEXT.problems,
    collapsible: "collapsed",
  };
}

export function problemItem(dir: string, index: number, p: { message: string; line?: number; severity: string; file?: string }): ItemSpec {
  const file = path.join(dir, p.file === "tests.jsonl" ? "tests.jsonl" : "events.jsonl");
  return {
    id: nodeKey({ kind: "problem", dir, index }),
    label: oneLine(p.message, 200),
    description: p.line ? `${path.basename(file)}:${p.line}` : undefined,
    tooltip: oneLine(p.message, 1000),
    icon: p.severity === "error" ? { id: "error", color: COLOR.error } : { id: "warning", color: COLOR.warning },
    contextValue: CONTEXT.problem,
    collapsible: "none",
    open: p.line ? { kind: "line", file, line: p.line } : undefined,
  };
}

/** Runs in the order the tree lists them: by folder, names compared with numbers as numbers. */
export function compareRuns(a: string, b: string): number {
  return a.localeCompare(b, undefined, { numeric: true, sensitivity: "base" });
}
