/** The extension's settings, read in one place. */
import * as vscode from "vscode";
import { normalizeRunsGlob } from "./logic/glob";
import type { ReplaySettings } from "./logic/replay";

export const SECTION = "causeway";

export interface Settings extends ReplaySettings {
  runsGlob: string;
  codeLens: boolean;
  timeoutMs: number;
  /** Ask before a test whose estimated cost (US dollars) is above this; null: never ask. */
  confirmAboveUsd: number | null;
  /** The user's price table: model → US dollars per million input / output tokens. */
  prices: Record<string, { input: number; output: number }>;
}

/** Keeps the well-formed rows of a price table setting. */
export function priceTable(v: unknown): Record<string, { input: number; output: number }> {
  const out: Record<string, { input: number; output: number }> = {};
  if (!v || typeof v !== "object") return out;
  for (const [k, row] of Object.entries(v as Record<string, unknown>)) {
    const r = row as { input?: unknown; output?: unknown } | null;
    if (r && typeof r.input === "number" && typeof r.output === "number" && r.input >= 0 && r.output >= 0) out[k] = { input: r.input, output: r.output };
  }
  return out;
}

function int(v: unknown, dflt: number, min: number, max: number): number {
  return typeof v === "number" && Number.isInteger(v) && v >= min && v <= max ? v : dflt;
}

export function readSettings(): Settings {
  const c = vscode.workspace.getConfiguration(SECTION);
  const allowed = c.get<unknown>("allowedPrograms");
  const n = int(c.get("test.n"), 20, 1, 10000);
  return {
    runsGlob: normalizeRunsGlob(c.get("runsGlob")),
    codeLens: c.get<boolean>("codeLens.enabled") !== false,
    n,
    nMax: Math.max(n, int(c.get("test.nMax"), 160, 1, 10000)),
    allowed: Array.isArray(allowed) ? allowed.filter((x): x is string => typeof x === "string" && x.length > 0) : [],
    workers: int(c.get("replay.workers"), 1, 1, 64),
    spans: c.get<boolean>("findCause.spans") !== false,
    timeoutMs: int(c.get("replay.timeoutSeconds"), 600, 10, 86400) * 1000,
    confirmAboveUsd: typeof c.get("test.confirmAboveUsd") === "number" && (c.get("test.confirmAboveUsd") as number) >= 0 ? (c.get("test.confirmAboveUsd") as number) : null,
    prices: priceTable(c.get("test.prices")),
  };
}

/** Adds a program to the workspace's allowed list (workspace settings). */
export async function allowProgram(program: string): Promise<void> {
  const c = vscode.workspace.getConfiguration(SECTION);
  const cur = c.inspect<string[]>("allowedPrograms")?.workspaceValue ?? [];
  if (!cur.includes(program)) await c.update("allowedPrograms", [...cur, program], vscode.ConfigurationTarget.Workspace);
}
