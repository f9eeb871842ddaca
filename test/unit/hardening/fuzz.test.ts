/**
 * Issue 11: a bounded, deterministic fuzz of the reader, verify, alerts and the report over random
 * mutations of the reference's demo run (test/fuzz/mutate.mjs: byte flips, truncations, deep
 * nesting, prototype keys, type swaps, hostile blobs, files that are not files, tests.jsonl
 * damage). Each mutated run must give a result (verify's problem list, alerts, the report's data,
 * all JSON-serialisable) and never throw. The larger one-off fuzz through the CLI is
 * bench/fuzz-cli.mjs (figures in bench/results/).
 */
import { describe, it, expect } from "vitest";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
// @ts-expect-error: a plain JS module shared with bench/fuzz-cli.mjs
import { mutate, rng } from "../../fuzz/mutate.mjs";
import { DEMO } from "./hostile";
import { analyseEverything } from "./analyse";
import { reportData } from "../../../core/report/report";

const SEED = 20261201;
const CASES = 250;

describe("fuzz: mutated runs never make the reader or an analysis throw", () => {
  it(`${CASES} mutations (seed ${SEED})`, () => {
    const r = rng(SEED);
    const base = fs.mkdtempSync(path.join(os.tmpdir(), "cw-fuzz-"));
    const kinds = new Map<string, number>();
    let failedVerify = 0;
    try {
      for (let i = 0; i < CASES; i++) {
        const dir = path.join(base, `m${i}`);
        fs.cpSync(DEMO, dir, { recursive: true });
        const did: string[] = [];
        for (let k = 0, n = 1 + r.int(3); k < n; k++) did.push(mutate(dir, r));
        for (const d of did) kinds.set(d.split(" ")[0], (kinds.get(d.split(" ")[0]) ?? 0) + 1);
        const what = `case ${i}: ${did.join("; ")}`;
        let verdict: { ok: boolean; problems: string[] } | undefined;
        expect(() => {
          verdict = analyseEverything(dir); // reader, verify, alerts, investigation, graph, taint, influence, extension
          JSON.stringify(reportData(dir));
        }, what).not.toThrow();
        // a mutation that damages the log is a problem on the list, never a silent pass
        if (!verdict!.ok) {
          failedVerify++;
          expect(verdict!.problems.length, what).toBeGreaterThan(0);
        }
        fs.rmSync(dir, { recursive: true, force: true });
      }
    } finally {
      fs.rmSync(base, { recursive: true, force: true });
    }
    // the mutations did damage: most runs fail verify
    expect(failedVerify).toBeGreaterThan(CASES / 2);
    expect(kinds.size).toBeGreaterThan(8);
  }, 600_000);
});
