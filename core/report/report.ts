/**
 * The static report: the investigator webview as one HTML file with the data embedded. It opens
 * from disk in any browser with no server and no network (its CSP forbids any request), and Run
 * test is disabled there. Run content is embedded as JSON in a non-executable script element, with
 * every "<" escaped, so nothing in a run can close the element or be parsed as markup.
 */
import fs from "node:fs";
import path from "node:path";
import { randomBytes } from "node:crypto";
import { gzipSync } from "node:zlib";
import { readRun } from "../log/reader";
import { investigateSafe, influenceSafe } from "../analysis/safe";
import { listRuns } from "../analysis/influence";
import type { Investigation, Workspace } from "../analysis/types";
import { runGraphOf } from "../analysis/run-graph";
import { packageRoot } from "../replay/loader";
import { attributedTargets, buildCase, caseHtml } from "./case";

export interface ReportData {
  mode: "report";
  generated: string;
  workspace: Workspace;
  runs: Record<string, Investigation>;
  /** Case files of the actions Find the cause investigated (HTML, every text escaped), shown below the investigator. */
  cases?: { run: string; target: string; headline: string; html: string }[];
}

/** Investigations of every run under root (or of root itself when it is a run). */
export function reportData(root: string, reportDir?: string): ReportData {
  const dirs = listRuns(root);
  const runs = dirs.map((d) => readRun(d, { checkBlobs: true }));
  // no prototype: a run id such as "__proto__" or "toString" is a key like any other
  const inv: Record<string, Investigation> = Object.create(null);
  for (const r of runs) {
    let key = r.runId;
    for (let i = 2; Object.hasOwn(inv, key); i++) key = `${r.runId} (${i})`;
    inv[key] = investigateSafe(r); // one run that cannot be analysed does not fail the others
  }
  const summaries = Object.values(inv).map((i) => i.summary);
  const cases: NonNullable<ReportData["cases"]> = [];
  for (const r of runs) {
    for (const target of attributedTargets(r)) {
      const c = buildCase(r, { target, from: reportDir ?? (fs.existsSync(path.join(root, "events.jsonl")) ? path.dirname(root) : root) });
      cases.push({ run: r.runId, target, headline: c.headline, html: caseHtml(c) });
    }
  }
  return {
    mode: "report",
    generated: new Date().toISOString(),
    workspace: { schema: "causeway.workspace.v1", runs: summaries, influence: influenceSafe(runs) },
    runs: inv,
    ...(cases.length ? { cases } : {}),
  };
}

/**
 * A run's investigation is embedded in two parts: what the Graph screen draws (runGraphOf: the
 * summary, the graph, the tool calls' marks; gzipped above GRAPH_GZIP_FROM), and the rest, read
 * only when a screen needs it. The rest is JSON up to this size and gzipped and base64-encoded above it (the webview
 * inflates it with the browser's DecompressionStream): big runs' investigations compress 10–20×,
 * and every byte of the page is parsed before it has loaded.
 */
export const GZIP_FROM = 1024 * 1024;

/**
 * The graph part is gzipped from this size: every byte of the page is read before the script runs
 * (bench/webview-graph.mjs: a 1,473-event run's 0.74 MB graph part, gzipped to 0.2 MB, starts the
 * script about 60 ms of CPU sooner), and inflating it takes a few milliseconds.
 */
export const GRAPH_GZIP_FROM = 64 * 1024;

/**
 * The data elements: the index (the workspace and the runs' keys) and, for the run with index i,
 * causeway-graph-i ("first", before the script) and causeway-run-i ("rest", after it: the page
 * starts before the browser has parsed them). webview/main.tsx reads them.
 */
export function dataElements(data: ReportData): { first: string; rest: string } {
  const keys = Object.keys(data.runs);
  const index = { mode: data.mode, generated: data.generated, workspace: data.workspace, runs: keys };
  const first = [`<script type="application/json" id="causeway-data">${embedJson(index)}</script>`];
  const rest: string[] = [];
  keys.forEach((key, i) => {
    const { graph: _drawn, ...others } = data.runs[key];
    first.push(dataElement(`causeway-graph-${i}`, runGraphOf(data.runs[key]), GRAPH_GZIP_FROM));
    rest.push(dataElement(`causeway-run-${i}`, others));
  });
  return { first: first.join("\n"), rest: rest.join("\n") };
}

/** A data element: JSON as text, or gzip+base64 above gzipFrom characters of JSON. */
export function dataElement(id: string, data: unknown, gzipFrom = GZIP_FROM): string {
  const json = JSON.stringify(data);
  if (json.length <= gzipFrom) return `<script type="application/json" id="${id}">${safeJson(json)}</script>`;
  // base64 has no "<": nothing in it can close the element.
  return `<script type="application/octet-stream" id="${id}" data-encoding="gzip+base64">${gzipSync(json).toString("base64")}</script>`;
}

/**
 * JSON that is safe inside <script type="application/json">: no "<", no U+2028/2029 surprises,
 * and no raw bidi control (written as its \u escape: the page's source reads as it parses; the
 * investigator shows each as ⟨U+202E⟩ when it draws the text).
 */
export function embedJson(v: unknown): string {
  return safeJson(JSON.stringify(v));
}

function safeJson(json: string): string {
  return json
    .replace(/</g, "\\u003c")
    .replace(/[\u2028\u2029\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

function asset(name: string): string {
  const file = path.join(packageRoot(), "dist", "webview", name);
  if (!fs.existsSync(file)) throw new Error(`${file} is missing: build the webview first (npm run build)`);
  // The bundles link external source maps; a report is one file, so the links go.
  return fs
    .readFileSync(file, "utf8")
    .replace(/\n?\/\/# sourceMappingURL=\S+\s*$/, "\n")
    .replace(/\n?\/\*# sourceMappingURL=\S+ \*\/\s*$/, "\n");
}

/** Script text that cannot end its element early ("</script" inside a string in the code). */
function inlineScript(js: string): string {
  return js.replace(/<\/script/gi, "<\\/script");
}

export function renderReport(data: ReportData): string {
  const nonce = randomBytes(16).toString("base64");
  const js = inlineScript(asset("webview.js"));
  // Cytoscape, inert until the investigator draws an ungrouped graph (webview/graph/load-cytoscape.ts)
  const cytoscape = inlineScript(asset("cytoscape.js"));
  const css = asset("webview.css");
  const theme = asset("report-theme.css");
  const parts = dataElements(data);
  const title = `Causeway report — ${data.workspace.runs.length} run${data.workspace.runs.length === 1 ? "" : "s"}`;
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:; font-src data:; script-src 'nonce-${nonce}';">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title>
<style>${theme}</style>
<style>${css}</style>
</head>
<body class="causeway-report">
<div id="root"></div>
${casesSection(data)}
${parts.first}
<script nonce="${nonce}">${js}</script>
${parts.rest}
<script type="text/plain" id="causeway-cytoscape">${cytoscape}</script>
</body>
</html>
`;
}

/** The case files as a static section after the investigator (no script: plain, escaped HTML). */
function casesSection(data: ReportData): string {
  if (!data.cases?.length) return "";
  const style = `<style>#causeway-cases{padding:16px 24px;max-width:1100px;font-family:var(--vscode-font-family,sans-serif);color:var(--vscode-foreground)}#causeway-cases table{border-collapse:collapse;margin:8px 0}#causeway-cases td,#causeway-cases th{border:1px solid var(--vscode-panel-border,#8884);padding:3px 6px;text-align:left;vertical-align:top}#causeway-cases blockquote{border-left:3px solid var(--vscode-charts-red,#c33);margin:8px 0;padding:4px 10px}#causeway-cases a{color:var(--vscode-textLink-foreground)}</style>`;
  return `${style}<div id="causeway-cases"><h1>Case files</h1>${data.cases.map((c) => c.html).join("\n")}</div>`;
}

export function writeReport(root: string, file: string): { runs: number; bytes: number } {
  const data = reportData(root, path.dirname(path.resolve(file)));
  const html = renderReport(data);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, html);
  return { runs: Object.keys(data.runs).length, bytes: Buffer.byteLength(html) };
}
