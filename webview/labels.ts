/**
 * Formatting helpers for the investigator: effects, intervals, rates, durations, token counts and
 * the human labels of statuses and verdicts. Pure functions; every screen formats numbers here so
 * the same figure reads the same everywhere.
 */
import type { CandidateStatus, ProvenanceStatus, Severity } from "../core/analysis/types";
import { pct as pctOf, signed } from "../core/util/numbers";

/** A signed effect with two decimals: +0.80, −0.15, +0.00. */
export function effect(x: number | null | undefined): string {
  return signed(x, "unicode", "—");
}

/** A 95% interval: [+0.63, +0.90]. */
export function interval(ci: readonly [number, number] | null | undefined): string {
  if (!ci) return "—";
  return `[${effect(ci[0])}, ${effect(ci[1])}]`;
}

/** A rate as a whole percentage: 0.8 → 80%. */
export function pct(x: number | null | undefined): string {
  return pctOf(x, "—");
}

/** "80% → 0%": how often the action happened with and without the input. */
export function rates(pWith: number | null | undefined, pWithout: number | null | undefined): string {
  if (pWith == null && pWithout == null) return "—";
  return `${pct(pWith)} \u2192 ${pct(pWithout)}`;
}

/** Milliseconds, compact: 0.14 ms, 8.2 ms, 1.35 s, 2 min 3 s. */
export function ms(x: number | null | undefined): string {
  if (x === null || x === undefined || !Number.isFinite(x)) return "";
  if (x < 1) return `${x.toFixed(2)} ms`;
  if (x < 100) return `${x.toFixed(1)} ms`;
  if (x < 1000) return `${Math.round(x)} ms`;
  if (x < 60_000) return `${(x / 1000).toFixed(2)} s`;
  const m = Math.floor(x / 60_000);
  return `${m} min ${Math.round((x - m * 60_000) / 1000)} s`;
}

/** A time offset from the start of the run: +0.0 ms, +27.5 ms, +1.20 s. */
export function offset(x: number): string {
  return `+${ms(Math.max(0, x)) || "0 ms"}`;
}

/** Thousands separated: 18,234. */
export function int(x: number | null | undefined): string {
  if (x === null || x === undefined || !Number.isFinite(x)) return "—";
  // not toLocaleString: its first call loads the locale data (tens of ms on the first frame)
  return String(Math.round(x)).replace(/\B(?=(\d{3})+$)/g, ",");
}

/** Bytes: 812 B, 4.1 KB, 2.3 MB. */
export function bytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}

/** An ISO timestamp as a readable local-independent date and time (UTC). */
export function when(iso: string | null | undefined): string {
  if (!iso) return "—";
  const m = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2}:\d{2})/.exec(iso);
  return m ? `${m[1]} ${m[2]} UTC` : iso;
}

/** Cuts a long text for a one-line cell; the full text stays available elsewhere. */
export function clip(s: string, n: number): string {
  return s.length > n ? `${s.slice(0, n - 1)}…` : s;
}

/** "1 test", "3 tests". */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${int(n)} ${n === 1 ? one : many}`;
}

export const CANDIDATE_LABEL: Record<CandidateStatus, string> = {
  primary: "Primary cause",
  contributing: "Contributing",
  confirmed: "Confirmed cause",
  joint: "Joint cause",
  suppressive: "Suppressive",
  inconclusive: "Inconclusive",
  "no-effect-seen": "No effect seen",
  "ruled-out": "Ruled out",
  untested: "Not tested",
};

/** The tone a status chip takes: cause (red), suppress (blue), unsure (amber), clear (green), none. */
export type Tone = "cause" | "suppress" | "unsure" | "clear" | "none" | "info";

export const CANDIDATE_TONE: Record<CandidateStatus, Tone> = {
  primary: "cause",
  contributing: "cause",
  confirmed: "cause",
  joint: "cause",
  suppressive: "suppress",
  inconclusive: "unsure",
  "no-effect-seen": "none",
  "ruled-out": "clear",
  untested: "none",
};

/** Test verdicts as written in tests.jsonl (causal, ruled-out, inconclusive, …). */
export function verdictLabel(v: string | null | undefined, role?: string | null): string {
  if (!v) return "—";
  if (v === "causal") {
    if (role === "primary") return "Primary cause";
    if (role === "contributing") return "Contributing";
    if (role === "joint") return "Joint cause";
    return "Causal";
  }
  const known: Record<string, string> = {
    "ruled-out": "Ruled out",
    inconclusive: "Inconclusive",
    suppressive: "Suppressive",
    "no-effect-seen": "No effect seen",
    "not-applied": "Not applied",
  };
  return known[v] ?? v.replace(/-/g, " ");
}

export function verdictTone(v: string | null | undefined): Tone {
  if (v === "causal") return "cause";
  if (v === "ruled-out") return "clear";
  if (v === "suppressive") return "suppress";
  if (v === "inconclusive") return "unsure";
  return "none";
}

export const SEVERITY_LABEL: Record<Severity, string> = { high: "High", review: "Review", info: "Info" };
export const SEVERITY_RANK: Record<Severity, number> = { high: 0, review: 1, info: 2 };

export const PROVENANCE_LABEL: Record<ProvenanceStatus, string> = {
  "untrusted-only": "Only untrusted content",
  trusted: "Trusted source",
  generated: "Generated",
  hashed: "Content-addressed",
};

export const PROVENANCE_TONE: Record<ProvenanceStatus, Tone> = {
  "untrusted-only": "cause",
  trusted: "clear",
  generated: "none",
  hashed: "info",
};

/** Event types as people say them. */
export function typeLabel(t: string): string {
  const known: Record<string, string> = {
    input: "Input",
    decision: "Model call",
    action: "Tool call",
    message: "Message",
    "run.start": "Run start",
    "run.end": "Run end",
    "agent.start": "Agent",
  };
  return known[t] ?? t;
}
