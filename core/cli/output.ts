/** Text output shared by CLI commands. */
import type { Attribution } from "../replay/attribute-types";
import { writeOut } from "./stdio";
import { signed } from "../util/numbers";
import { forTerminal, shown } from "../log/shown";

/**
 * One line (or lines) of text output. Every text the CLI prints goes through here or {@link err}:
 * control characters and bidi controls in it are shown escaped (`\x1b`, `\u202e`), the newlines
 * the CLI lays out are kept. A run-derived field is wrapped in `shown()` where it is put in a line,
 * so a newline inside it is escaped too.
 */
export function out(...a: unknown[]): void {
  writeOut(forTerminal(a.map(String).join(" "), { newlines: true }) + "\n");
}

/** A line on stderr, escaped as {@link out} escapes stdout. */
export function err(line: string): void {
  process.stderr.write(forTerminal(line, { newlines: true }) + "\n");
}

export function json(v: unknown): void {
  writeOut(JSON.stringify(v, null, 2) + "\n");
}

/** One JSON object on one line: the --json output of long-running commands (JSON Lines). */
export function jsonLine(v: unknown): void {
  process.stdout.write(JSON.stringify(v) + "\n");
}

const pad = (s: string, n: number) => (s.length >= n ? s : s + " ".repeat(n - s.length));

/** One line per test, like the reference's demo output. */
export function formatTest(r: Record<string, any>): string {
  const head = `  remove ${pad(shown(r.intervention), 28)} target ${pad(shown(r.target), 40)} `;
  if (r.p_with === null || r.p_with === undefined) {
    return `${head}changed in ${signed(r.effect)} more calls than noise (${Math.round((r.noise ?? 0) * 100)}%) [${signed(r.ci[0])}, ${signed(r.ci[1])}] n=${r.n}  ${String(r.verdict).toUpperCase()}`;
  }
  return (
    `${head}P(with)=${r.p_with.toFixed(2)} P(without)=${r.p_without.toFixed(2)} effect=${signed(r.effect)} [${signed(r.ci[0])}, ${signed(r.ci[1])}] n=${r.n}  ${String(r.verdict).toUpperCase()}` +
    (r.role ? ` (${r.role})` : "") +
    stopNote(r)
  );
}

/** Why a test stopped where it did, when that is not a verdict (a budget, futility, every pair allowed used). */
function stopNote(r: Record<string, any>): string {
  if (r.stopped === "budget") return ` (stopped at n=${r.n}: model-call budget)`;
  if (String(r.verdict) !== "inconclusive") return "";
  const rate = `target reproduced in ${Math.round(r.p_with * 100)}% of replays`;
  const of = typeof r.n_max === "number" && r.n_max > r.n ? ` of the ${r.n_max} allowed` : "";
  if (r.stopped === "futility") return ` (stopped at n=${r.n}${of}: no effect seen, and more pairs were unlikely to reach a verdict; ${rate})`;
  const used = typeof r.n_max === "number" && r.n >= r.n_max ? `all ${r.n_max} allowed pairs used` : `stopped at n=${r.n}`;
  return ` (${used}; ${rate}${r.n_needed && r.n_needed > r.n ? `; about n=${r.n_needed} would decide` : ""})`;
}

export function formatAttribution(a: Attribution): string[] {
  const lines = [
    `Find the cause of ${shown(a.target)} (suspects: ${a.suspects.map(shown).join(", ")})${a.rung === 1 ? " by re-sending the one recorded call that made it (rung 1)" : ""}`,
  ];
  for (const ph of a.phases ?? []) {
    if (!ph.predicted) continue;
    const order = ph.predicted.order.map((o) => `${shown(o.spec)} ${signed(o.weight)}`).join(", ");
    lines.push(
      `  predicted order of the ${ph.name} suspects (a surrogate fit on ${ph.predicted.k} replays with random halves removed, ${ph.predicted.hits} with the action; predicted, not tested): ${order}${ph.lead ? `; tested first: ${shown(ph.lead)}` : ""}`,
    );
  }
  for (const t of a.tests) lines.push(formatTest(t));
  lines.push("");
  lines.push(`  => ${a.summary}`);
  if (a.chain?.length) {
    lines.push("  handoff chain (root → action), each hop with the test of removing it:");
    for (const h of a.chain)
      lines.push(
        `    ${shown(h.from)} → ${shown(h.to)}  ${String(h.test.verdict).toUpperCase()} ${signed(h.test.effect)} [${signed(h.test.ci[0])}, ${signed(h.test.ci[1])}] n=${h.test.n}`,
      );
  }
  for (const nt of a.not_tested ?? []) lines.push(`  not tested: ${shown(nt.spec)}: ${shown(nt.reason)}`);
  lines.push(`  model calls: ${a.model_calls} (a replay without sharing would make ${a.naive_model_calls})`);
  return lines;
}
