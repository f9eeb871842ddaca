/** The surrogate's figure in bench/README.md is its results files'. */
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = path.resolve(__dirname, "../..");
const read = (f: string) => fs.readFileSync(path.join(ROOT, f), "utf8");
interface Row {
  method: string;
  k: number | null;
  attributions: number;
  exact: number;
  false_blames: number;
  mean_calls: number;
}

describe("ranking many blocks: the published figure", () => {
  it("bench/README.md quotes the surrogate at K = 48 and halving as the results files have them", () => {
    const readme = read("bench/README.md");
    const res = (draw: string) => JSON.parse(read(`bench/results/2026-12-06-surrogate-${draw}.json`)) as { rows: Row[]; attributions: number; docs: number };
    const r = res("reshuffle");
    const id = res("identical");
    const at = (x: { rows: Row[] }, method: string, k: number | null) => x.rows.find((row) => row.method === method && row.k === k)!;
    const s = at(r, "surrogate", 48);
    const h = at(r, "halving", null);
    expect(r.docs).toBe(32);
    expect(r.attributions).toBe(50);
    expect(readme).toContain(
      `**${s.mean_calls} model calls** per attribution, exact ${s.exact}/${s.attributions}, against **${h.mean_calls}** and exact ${h.exact}/${h.attributions} with halving, 0 false blames either way`,
    );
    expect(s.false_blames + h.false_blames).toBe(0);
    const si = at(id, "surrogate", 48);
    const hi = at(id, "halving", null);
    expect(readme).toContain(
      `with draws that depend on the seed alone ${si.mean_calls} (${si.exact}/${si.attributions}) against ${hi.mean_calls} (${hi.exact}/${hi.attributions})`,
    );
    // "cheaper and at least as often exact from K = 32" holds in both files, and not below it
    for (const x of [r, id])
      for (const row of x.rows.filter((q) => q.method === "surrogate" && q.k! >= 32)) {
        expect(row.mean_calls).toBeLessThan(at(x, "halving", null).mean_calls);
        expect(row.exact).toBeGreaterThanOrEqual(at(x, "halving", null).exact);
      }
    expect([16, 24].some((k) => at(id, "surrogate", k).exact < hi.exact)).toBe(true);
    // the statistics page and the changelog round the same figures
    expect(read("docs/statistics.md")).toContain(
      `it cost ${Math.round(s.mean_calls)} model calls per attribution at K = 48 against ${Math.round(h.mean_calls)} for\n  halving`,
    );
    expect(read("CHANGELOG.md")).toContain(`${Math.round(s.mean_calls)} model calls per attribution at K = 48 instead of ${Math.round(h.mean_calls)}`);
    expect(readme).toContain("Cheaper and at least as often exact from K = 32 (at K = 16 and 24, fewer exact on seed-only draws)");
  });
});
