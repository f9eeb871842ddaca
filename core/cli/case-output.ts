/**
 * The text output of `causeway fix-check` and of `attribute --spans / --shapes`, for the commands
 * that run them here (case-commands.ts, replay-commands.ts) and on the team's workers
 * (job-commands.ts).
 */
import type { FixCheck } from "../replay/fixcheck";
import type { Narrowed } from "../replay/narrow";

const pct = (x: number) => `${Math.round(x * 100)}%`;
const sgn = (x: number) => (x >= 0 ? "+" : "−") + Math.abs(x).toFixed(2);
const ivl = (c: [number, number]) => `[${sgn(c[0])}, ${sgn(c[1])}]`;
const rate = (r: { p: number; ci: [number, number] }) => `${pct(r.p)} [${pct(r.ci[0])}, ${pct(r.ci[1])}]`;

export function formatNarrowed(n: Narrowed): string[] {
  const lines: string[] = [];
  for (const s of n.spans) {
    lines.push(`causing span of ${s.cause} (${s.input.length} characters; ${s.tests.length} span tests):`);
    for (const sp of s.spans) {
      lines.push(
        `  ${sp.ranges.map(([a, b]) => `${a}-${b}`).join(",")} (${sp.level}${sp.joint ? ", joint: each part enough alone" : ""})  effect ${sgn(sp.effect)} ${ivl(sp.ci)} n=${sp.n}${sp.overlaps_whole ? "  (overlaps the whole input's)" : "  (does NOT overlap the whole input's)"}`,
      );
      for (const t of sp.texts) lines.push(`    "${t}"`);
    }
    if (s.note) lines.push(`  ${s.note}`);
  }
  for (const k of n.skipped) lines.push(`not narrowed: ${k.cause}: ${k.reason}`);
  for (const s of n.shapes) {
    lines.push(`failure shape of ${s.causes.join(" and ")}: ${s.shape.toUpperCase()}`);
    for (const [arm, a] of Object.entries(s.arms)) lines.push(`  ${arm.padEnd(8)} ${rate(a)}  n=${a.n}`);
    lines.push(`  ${s.summary}`);
  }
  return lines;
}

export function formatFixCheck(f: FixCheck): string[] {
  const lines = [`${f.verdict.toUpperCase()}  fix: ${f.fix.join(" + ")}`];
  lines.push(
    `  harm ${f.harm.target}: ${rate(f.harm.without_fix)} without the fix → ${rate(f.harm.with_fix)} with it; effect ${sgn(f.harm.effect)} ${ivl(f.harm.ci)} n=${f.harm.test.n}`,
  );
  for (const k of f.keep)
    lines.push(
      `  keep ${k.target}: ${k.status.toUpperCase()} (${rate(k.without_fix)} → ${rate(k.with_fix)}; effect ${sgn(k.effect)} ${ivl(k.ci)} n=${k.test.n})`,
    );
  for (const e of f.excluded) lines.push(`  not counted as intended: ${e.target} — ${e.reason}`);
  for (const c of f.changes as { kind: string; item: { source: string }; after: string; removed: { text: string }[] }[]) {
    lines.push(
      `  changed ${c.item.source} (${c.kind}) → ${c.after}${c.removed.length ? `; removed: ${c.removed.map((r) => JSON.stringify(r.text.length > 80 ? r.text.slice(0, 79) + "…" : r.text)).join(", ")}` : ""}`,
    );
  }
  return lines;
}
