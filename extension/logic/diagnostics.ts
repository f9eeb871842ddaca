/**
 * Alerts and integrity problems as diagnostics (plain data; extension/diagnostics.ts makes them
 * vscode.Diagnostics). Each alert lands on its event's line of events.jsonl; alerts recorded at a
 * source site also land on that line of the agent's file when the file is in the workspace, one
 * diagnostic per (line, rule, tool) across runs. A failed verify is an error on the first bad
 * line. All text is the run's own and is shown as plain text.
 */
import path from "node:path";
import type { Alert, EvidenceRef, Severity } from "../../core/analysis/types";
import type { Problem } from "../../core/log/problems";
import type { RunAnalysis } from "./analysis";
import type { SiteResolver } from "./sites";
import { signed } from "../../core/util/numbers";
import { count, t } from "./l10n";

export type DiagSeverity = "error" | "warning" | "info";

export type RelatedSpec = { kind: "file"; file: string; line: number; message: string } | { kind: "blob"; run: string; ref: string; message: string };

/** A tool call a quick fix can run Find the cause on. */
export interface FixTarget {
  run: string;
  /** The run's folder name (what the tree shows). */
  runId: string;
  seq: number;
  tool: string;
}

export interface DiagSpec {
  /** Absolute path of the file the diagnostic is on. */
  file: string;
  /** 1-based line. */
  line: number;
  severity: DiagSeverity;
  message: string;
  /** The alert rule, or the problem code. */
  code: string;
  related: RelatedSpec[];
  fixes: FixTarget[];
}

export interface RunForDiagnostics {
  dir: string;
  analysis: RunAnalysis;
  /** Problems of a verify of the current version (blob checks included), when one was run. */
  verified?: Problem[];
}

const MAX_MESSAGE = 600;
const MAX_RELATED = 12;

export const SEVERITY: Record<Severity, DiagSeverity> = { high: "error", review: "warning", info: "info" };

// eslint-disable-next-line no-control-regex -- control characters of untrusted text are dropped
const CONTROL_CHARS = /[\u0000-\u001f\u007f]/g;

/** One line of plain text, cut to a length the Problems view can show. */
export function oneLine(s: string, max = MAX_MESSAGE): string {
  const t = s
    .replace(/[\r\n\t]+/g, " ")
    .replace(CONTROL_CHARS, "")
    .trim();
  return t.length <= max ? t : t.slice(0, max - 1) + "…";
}

/** "tested cause: vendor:portal/notes.md +0.80 [+0.63, +0.90] (primary, n = 40)" */
export function causeText(c: NonNullable<Alert["cause"]>): string {
  return `tested cause: ${c.intervention.replace(/^input:/, "")} ${signed(c.effect)} [${signed(c.ci[0])}, ${signed(c.ci[1])}]${c.role ? ` (${c.role}, n = ${c.n})` : ` (n = ${c.n})`}`;
}

function alertMessage(a: Alert): string {
  const parts = [a.title];
  if (a.detail) parts.push(a.detail);
  if (a.cause) parts.push(causeText(a.cause));
  return oneLine(parts.join(" — "));
}

function evidenceRelated(dir: string, ev: EvidenceRef[] | undefined): RelatedSpec[] {
  const out: RelatedSpec[] = [];
  for (const e of ev ?? []) {
    if (out.length >= MAX_RELATED) break;
    const label = oneLine(e.label, 120);
    if (Number.isInteger(e.line) && e.line > 0) {
      out.push({ kind: "file", file: path.join(dir, "events.jsonl"), line: e.line, message: `${e.trust} input ${label} (seq ${e.seq})` });
    }
    if (e.ref && /^sha256:[0-9a-f]{64}$/.test(e.ref)) out.push({ kind: "blob", run: dir, ref: e.ref, message: `content of ${label}` });
  }
  return out;
}

const QUIET_PROBLEMS = new Set(["no-run-end", "tests-unchained"]);

/** Diagnostics on a run's own files: events.jsonl (alerts, integrity) and tests.jsonl. */
export function runDiagnostics(run: RunForDiagnostics, resolver?: SiteResolver): DiagSpec[] {
  const { dir, analysis } = run;
  const events = path.join(dir, "events.jsonl");
  const out: DiagSpec[] = [];
  const problems = run.verified ?? analysis.problems;
  const errors = problems.filter((p) => p.severity === "error");
  if (errors.length) {
    const p = errors[0];
    const file = p.file === "tests.jsonl" ? path.join(dir, "tests.jsonl") : events;
    out.push({
      file,
      line: p.line ?? 1,
      severity: "error",
      message: oneLine(
        errors.length > 1
          ? t("Verify failed: {0} (and {1})", p.message, count(errors.length - 1, "{0} more problem", "{0} more problems"))
          : t("Verify failed: {0}", p.message),
      ),
      code: p.code,
      related: errors
        .slice(1, MAX_RELATED)
        .filter((q) => q.line)
        .map((q) => ({
          kind: "file" as const,
          file: q.file === "tests.jsonl" ? path.join(dir, "tests.jsonl") : events,
          line: q.line!,
          message: oneLine(q.message, 200),
        })),
      fixes: [],
    });
  }
  for (const p of problems) {
    if (p.severity !== "warning" || QUIET_PROBLEMS.has(p.code) || !p.line) continue;
    out.push({
      file: p.file === "tests.jsonl" ? path.join(dir, "tests.jsonl") : events,
      line: p.line,
      severity: "warning",
      message: oneLine(p.message),
      code: p.code,
      related: [],
      fixes: [],
    });
  }
  for (const a of analysis.alerts) {
    if (a.rule === "integrity") continue; // reported above, on the first bad line
    const related = evidenceRelated(dir, a.evidence);
    if (a.site && resolver) {
      const s = resolver.resolve(a.site.file, dir, analysis.program);
      if (s) related.unshift({ kind: "file", file: s.file, line: a.site.line, message: `recorded here (${oneLine(a.site.file, 200)}:${a.site.line})` });
    }
    out.push({
      file: events,
      line: a.line && a.line > 0 ? a.line : 1,
      severity: SEVERITY[a.severity],
      message: alertMessage(a),
      code: a.rule,
      related: related.slice(0, MAX_RELATED),
      fixes: a.seq !== null && a.tool ? [{ run: dir, runId: path.basename(dir), seq: a.seq, tool: a.tool }] : [],
    });
  }
  return out;
}

/**
 * Diagnostics on agent source lines: the alerts of every run recorded at a site that resolves to a
 * file in the workspace, one per (file, line, rule, tool), listing the runs.
 */
export function siteDiagnostics(runs: readonly RunForDiagnostics[], resolver: SiteResolver): DiagSpec[] {
  const groups = new Map<string, { spec: DiagSpec; dirs: Set<string>; runs: string[]; worst: Severity; cause: Alert["cause"] }>();
  const rank: Record<Severity, number> = { high: 0, review: 1, info: 2 };
  const ordered = [...runs].sort((a, b) => a.dir.localeCompare(b.dir, undefined, { numeric: true }));
  for (const { dir, analysis } of ordered) {
    for (const a of analysis.alerts) {
      if (!a.site || a.rule === "integrity") continue;
      const s = resolver.resolve(a.site.file, dir, analysis.program);
      if (!s || !s.inWorkspace) continue;
      const key = `${s.file}\0${a.site.line}\0${a.rule}\0${a.tool ?? ""}`;
      let g = groups.get(key);
      if (!g) {
        g = {
          spec: { file: s.file, line: a.site.line, severity: SEVERITY[a.severity], message: "", code: a.rule, related: [], fixes: [] },
          dirs: new Set(),
          runs: [],
          worst: a.severity,
          cause: null,
        };
        groups.set(key, g);
      }
      const runId = path.basename(dir); // folder names: two copies of a run share their run_id
      if (!g.dirs.has(dir)) {
        g.dirs.add(dir);
        g.runs.push(runId);
      }
      if (rank[a.severity] < rank[g.worst]) {
        g.worst = a.severity;
        g.spec.severity = SEVERITY[a.severity];
      }
      if (a.cause && (!g.cause || a.cause.effect > g.cause.effect)) g.cause = a.cause;
      if (g.spec.related.length < MAX_RELATED && a.line) {
        g.spec.related.push({
          kind: "file",
          file: path.join(dir, "events.jsonl"),
          line: a.line,
          message: oneLine(`${runId}: ${a.title}${a.detail ? ` — ${a.detail}` : ""}`, 300),
        });
      }
      if (g.runs.length === 1) g.spec.related.push(...evidenceRelated(dir, a.evidence).slice(0, 4));
      if (a.seq !== null && a.tool && g.spec.fixes.length < 5) g.spec.fixes.push({ run: dir, runId, seq: a.seq, tool: a.tool });
      if (!g.spec.message) g.spec.message = a.title;
    }
  }
  const out: DiagSpec[] = [];
  for (const g of groups.values()) {
    const names = g.runs.slice(0, 3).join(", ") + (g.runs.length > 3 ? `, +${g.runs.length - 3} more` : "");
    const tail = g.cause ? ` — ${causeText(g.cause)}` : "";
    g.spec.message = oneLine(`${g.spec.message} (${g.runs.length} run${g.runs.length === 1 ? "" : "s"}: ${names})${tail}`);
    g.spec.related = g.spec.related.slice(0, MAX_RELATED);
    out.push(g.spec);
  }
  return out;
}
