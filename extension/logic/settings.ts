/**
 * The extension's settings as values, apart from VS Code: parsing with defaults and bounds, and a
 * cache of each workspace folder's settings. `causeway.runsGlob` and `causeway.allowedPrograms`
 * are resource-scoped: in a multi-root workspace each folder may set its own, so they are read
 * with the folder of the run (or of the workspace folder being scanned) as the resource.
 */
import { normalizeRunsGlob, isInside } from "./glob";
import type { ReplaySettings } from "./replay";

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

/** Settings from a getter of `causeway.*` keys (VS Code's configuration for one resource). */
export function settingsFrom(get: (key: string) => unknown): Settings {
  const allowed = get("allowedPrograms");
  const n = int(get("test.n"), 20, 1, 10000);
  return {
    runsGlob: normalizeRunsGlob(get("runsGlob")),
    codeLens: get("codeLens.enabled") !== false,
    n,
    nMax: Math.max(n, int(get("test.nMax"), 160, 1, 10000)),
    allowed: Array.isArray(allowed) ? allowed.filter((x): x is string => typeof x === "string" && x.length > 0) : [],
    workers: int(get("replay.workers"), 1, 1, 64),
    spans: get("findCause.spans") !== false,
    timeoutMs: int(get("replay.timeoutSeconds"), 600, 10, 86400) * 1000,
    confirmAboveUsd:
      typeof get("test.confirmAboveUsd") === "number" && (get("test.confirmAboveUsd") as number) >= 0 ? (get("test.confirmAboveUsd") as number) : null,
    prices: priceTable(get("test.prices")),
  };
}

/**
 * Each workspace folder's settings, read once until `clear()`: `get(path)` gives the settings of
 * the folder holding `path` (the innermost, in nested folders), `get()` the workspace's.
 */
export class SettingsByFolder {
  private cache = new Map<string, Settings>();

  constructor(
    /** Reads the settings for a folder (undefined: no resource, the workspace's values). */
    private readonly read: (folder: string | undefined) => Settings,
    private readonly folders: () => readonly string[],
  ) {}

  /** The workspace folder holding `p`, if any. */
  folderOf(p: string): string | undefined {
    let best: string | undefined;
    for (const f of this.folders()) if (isInside(p, f) && (!best || f.length > best.length)) best = f;
    return best;
  }

  get(resource?: string): Settings {
    const folder = resource === undefined ? undefined : this.folderOf(resource);
    const key = folder ?? "";
    let s = this.cache.get(key);
    if (!s) this.cache.set(key, (s = this.read(folder)));
    return s;
  }

  /** Forgets every folder's settings (after a configuration change). */
  clear(): void {
    this.cache.clear();
  }

  /** A fingerprint of one setting across the workspace and its folders (to see whether it changed). */
  fingerprint(key: keyof Settings): string {
    return JSON.stringify([this.get()[key], ...this.folders().map((f) => [f, this.get(f)[key]])]);
  }
}
