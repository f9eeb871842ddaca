/**
 * The one message protocol between the extension host and the investigator webview. Both sides
 * import these types; the host validates everything that arrives with {@link parseWebviewMessage}
 * (a webview is a browser page showing attacker-written content, so its messages are untrusted).
 * Requests that need an answer carry a `requestId`; the host answers with `progress` messages and
 * one `result`.
 */
import type { Investigation, RunGraph, Workspace } from "../analysis/types";

export type Screen = "runs" | "overview" | "why" | "timeline" | "graph" | "agents" | "influence";
export const SCREENS: readonly Screen[] = ["runs", "overview", "why", "timeline", "graph", "agents", "influence"];

/** Where the webview is running, and what it may ask for. */
export interface Capabilities {
  /** "vscode": inside the extension; "report": a static HTML file. */
  mode: "vscode" | "report";
  /** Run test / Find the cause are available. */
  canReplay: boolean;
  /** Why not, in a sentence (restricted mode, a static report, a program not allowed…). */
  replayReason?: string;
}

// ------------------------------------------------------------------ host → webview

export type HostToWebview =
  | { type: "init"; capabilities: Capabilities }
  | { type: "workspace"; workspace: Workspace }
  | { type: "investigation"; run: string; investigation: Investigation }
  /** The Graph screen's part of a run, ahead of (or instead of, until asked) the investigation. */
  | { type: "runGraph"; run: string; graph: RunGraph }
  /** A run that was being shown went away (deleted). */
  | { type: "runRemoved"; run: string }
  /** Show a run (and optionally one event) on a screen. */
  | { type: "reveal"; run: string; screen?: Screen; node?: string; seq?: number }
  | { type: "progress"; requestId: string; phase: string; done: number; total: number; message?: string }
  /**
   * A finished job. `result` is read field by field on arrival (webview/logic.ts jobOutcome; a
   * test's rung and assumptions and an attribution's chain with core/analysis/tested.ts).
   */
  | { type: "result"; requestId: string; ok: true; kind: "test" | "attribution" | "fixCheck"; result: unknown }
  | { type: "result"; requestId: string; ok: false; error: string; cancelled?: boolean };

// ------------------------------------------------------------------ webview → host

export type WebviewToHost =
  | { type: "ready" }
  /** Ask for a run's investigation; part "graph": only what the Graph screen draws, for now. */
  | { type: "openRun"; run: string; part?: "graph" }
  | { type: "runTest"; requestId: string; run: string; intervention: string; target: string; n?: number; nMax?: number }
  | { type: "findCause"; requestId: string; run: string; target: string; suspects?: string[] }
  /** Replay with a fix applied: harm rate without → with it, and the intended actions. */
  | { type: "checkFix"; requestId: string; run: string; fix: string[]; harm: string; keep?: string[] }
  /** Save the case file of an action (markdown), asking where. */
  | { type: "exportCase"; run: string; target: string }
  | { type: "cancel"; requestId: string }
  /** Open a source file (a recorded site) at a line. */
  | { type: "openSite"; run: string; file: string; line: number }
  /** Open the run's events.jsonl at a line. */
  | { type: "openEvent"; run: string; line: number }
  | { type: "openBlob"; run: string; ref: string }
  | { type: "revealInTree"; run: string; seq?: number }
  | { type: "exportReport" };

const REF_RE = /^sha256:[0-9a-f]{64}$/;
const ID_RE = /^[A-Za-z0-9_-]{1,64}$/;

function str(x: unknown, max = 4096): x is string {
  return typeof x === "string" && x.length > 0 && x.length <= max;
}
function int(x: unknown, min = 0, max = 1e9): x is number {
  return typeof x === "number" && Number.isInteger(x) && x >= min && x <= max;
}

/**
 * Checks a message from the webview field by field; returns it typed, or null when it is not one
 * of the messages above (unknown type, missing or oversized fields, a ref that is not a ref…).
 */
export function parseWebviewMessage(m: unknown): WebviewToHost | null {
  if (!m || typeof m !== "object" || Array.isArray(m)) return null;
  const x = m as Record<string, unknown>;
  switch (x.type) {
    case "ready":
    case "exportReport":
      return { type: x.type };
    case "openRun":
      return str(x.run) ? { type: "openRun", run: x.run, ...(x.part === "graph" ? { part: "graph" as const } : {}) } : null;
    case "runTest":
      if (!str(x.requestId) || !ID_RE.test(x.requestId) || !str(x.run) || !str(x.intervention, 1000) || !str(x.target, 1000)) return null;
      if (x.n !== undefined && !int(x.n, 1, 10000)) return null;
      if (x.nMax !== undefined && !int(x.nMax, 1, 10000)) return null;
      return { type: "runTest", requestId: x.requestId, run: x.run, intervention: x.intervention, target: x.target, n: x.n, nMax: x.nMax };
    case "findCause":
      if (!str(x.requestId) || !ID_RE.test(x.requestId) || !str(x.run) || !str(x.target, 1000)) return null;
      if (x.suspects !== undefined && !(Array.isArray(x.suspects) && x.suspects.length <= 64 && x.suspects.every((s) => str(s, 1000)))) return null;
      return { type: "findCause", requestId: x.requestId, run: x.run, target: x.target, suspects: x.suspects };
    case "checkFix":
      if (!str(x.requestId) || !ID_RE.test(x.requestId) || !str(x.run) || !str(x.harm, 1000)) return null;
      if (!(Array.isArray(x.fix) && x.fix.length >= 1 && x.fix.length <= 8 && x.fix.every((s) => str(s, 4000)))) return null;
      // a fix from the webview may not read files (replace:…=@FILE): the webview shows untrusted content
      if (x.fix.some((s) => /^replace:[^=]*=@/.test(s.trim()))) return null;
      if (x.keep !== undefined && !(Array.isArray(x.keep) && x.keep.length <= 32 && x.keep.every((s) => str(s, 1000)))) return null;
      return { type: "checkFix", requestId: x.requestId, run: x.run, fix: x.fix, harm: x.harm, keep: x.keep };
    case "exportCase":
      return str(x.run) && str(x.target, 1000) ? { type: "exportCase", run: x.run, target: x.target } : null;
    case "cancel":
      return str(x.requestId) && ID_RE.test(x.requestId) ? { type: "cancel", requestId: x.requestId } : null;
    case "openSite":
      return str(x.run) && str(x.file, 1024) && int(x.line, 1) ? { type: "openSite", run: x.run, file: x.file, line: x.line } : null;
    case "openEvent":
      return str(x.run) && int(x.line, 1) ? { type: "openEvent", run: x.run, line: x.line } : null;
    case "openBlob":
      return str(x.run) && typeof x.ref === "string" && REF_RE.test(x.ref) ? { type: "openBlob", run: x.run, ref: x.ref } : null;
    case "revealInTree":
      return str(x.run) && (x.seq === undefined || int(x.seq)) ? { type: "revealInTree", run: x.run, seq: x.seq } : null;
    default:
      return null;
  }
}
