/**
 * Find the cause's chain is rebuilt from tests.jsonl into the Investigation (core/analysis/
 * chains.ts), so it survives a reload and reaches the static report: from a real attribution of a
 * recorded wrapped-handoff run, the latest attribution per target winning, chains written by
 * others kept apart and marked, and forged lines bounded and never crashing.
 */
import fs from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { investigate } from "../../../core/analysis/investigate";
import { CHAIN_MAX } from "../../../core/analysis/tested";
import type { ActionView, Investigation } from "../../../core/analysis/types";
import { readRun } from "../../../core/log/reader";
import { appendTest } from "../../../core/log/testslog";
import type { Attribution } from "../../../core/replay/attribute-types";
import { NOTE, TARGET, recordAndAttribute } from "./handoff-run";

let dir: string;
let attribution: Attribution;
beforeAll(async () => {
  ({ dir, attribution } = await recordAndAttribute());
}, 120_000);

/** A copy of the run folder, so each test adds its own lines. */
function copy(): string {
  const to = fs.mkdtempSync(`${dir}-copy-`);
  fs.cpSync(dir, to, { recursive: true });
  return to;
}
const emailOf = (inv: Investigation): ActionView => Object.values(inv.actions).find((a) => a.tool === "send_email")!;
/** Writes raw lines, as anyone with the folder can (unchained, claiming any writer). */
const forge = (d: string, recs: Record<string, unknown>[]) =>
  fs.appendFileSync(path.join(d, "tests.jsonl"), recs.map((r) => JSON.stringify(r)).join("\n") + "\n");
const hopLine = (attr: string, index: number, from: string, to: string, extra: Record<string, unknown> = {}) => ({
  target: TARGET,
  intervention: from,
  verdict: "causal",
  n: 10,
  effect: 0.7,
  ci: [0.3, 1],
  attribution: attr,
  chain_hop: { index, from, to },
  writer: "local",
  ...extra,
});

describe("a chain rebuilt from tests.jsonl", () => {
  it("after a real attribution, the action's view carries the chain it followed, hop by hop, with their lines", () => {
    expect(attribution.chain?.map((h) => [h.from, h.to])).toEqual([
      [NOTE, "input:user"],
      ["input:user", TARGET],
    ]);
    const inv = JSON.parse(JSON.stringify(investigate(readRun(dir)))) as Investigation; // as the report embeds it
    const c = emailOf(inv).chain!;
    expect(c.attribution).toBe(attribution.attribution_id);
    expect(c.target).toBe(TARGET);
    expect(c.hops.map((h) => [h.from, h.to, h.test.verdict, h.test.n])).toEqual(attribution.chain!.map((h) => [h.from, h.to, "causal", h.test.n]));
    expect(c.hops[0].test.effect).toBeCloseTo(attribution.chain![0].test.effect, 9);
    expect(c.hops.every((h) => h.test.rung === attribution.rung)).toBe(true);
    const lines = fs.readFileSync(path.join(dir, "tests.jsonl"), "utf8").split("\n");
    expect(c.lines.map((l) => (JSON.parse(lines[l - 1]) as { chain_hop: { index: number } }).chain_hop.index)).toEqual([0, 1]);
    expect(emailOf(inv).foreignChain).toBeUndefined();
    // other calls have no chain
    expect(Object.values(inv.actions).filter((a) => a.chain)).toHaveLength(1);
  });

  it("the latest attribution of the target wins: one that followed no handoff leaves no chain, a newer chain replaces the old", () => {
    const d = copy();
    appendTest(d, { target: TARGET, intervention: NOTE, verdict: "causal", n: 10, effect: 0.6, ci: [0.2, 1], attribution: "later0000001" });
    expect(emailOf(investigate(readRun(d))).chain).toBeUndefined();
    appendTest(d, { ...hopLine("later0000002", 0, NOTE, TARGET), writer: undefined });
    const c = emailOf(investigate(readRun(d))).chain!;
    expect([c.attribution, c.hops.map((h) => `${h.from} -> ${h.to}`)]).toEqual(["later0000002", [`${NOTE} -> ${TARGET}`]]);
  });

  it("a chain written by someone other than the run's writer is kept apart, marked with its writer, and cannot change the counted one", () => {
    const d = copy();
    // mallory claims a different chain, under a newer id and under the run's own attribution id
    forge(d, [
      hopLine("mallory00001", 0, "input:wiki:printers", TARGET, { writer: "mallory" }),
      hopLine(attribution.attribution_id, 0, "input:wiki:printers", TARGET, { writer: "mallory" }),
    ]);
    const v = emailOf(investigate(readRun(d)));
    expect(v.chain!.hops.map((h) => h.from)).toEqual([NOTE, "input:user"]);
    expect(v.chain!.foreign).toBeUndefined();
    expect(v.foreignChain).toMatchObject({
      foreign: true,
      by: "mallory",
      attribution: attribution.attribution_id,
      hops: [{ from: "input:wiki:printers", to: TARGET }],
    });
    // and its lines are listed with the other foreign tests
    expect(v.foreignTests?.length).toBe(2);
  });

  it("forged hop lines (markup, huge strings, cycles, duplicates, bad shapes, too many) are bounded and never crash", () => {
    const d = copy();
    const huge = `input:${"A".repeat(300_000)}`;
    const evil = "input:<img src=x onerror=alert(1)>";
    const F = "forged000001";
    forge(d, [
      hopLine(F, 0, evil, "msg:a->b"),
      hopLine(F, 0, "input:duplicate", "msg:x->y"), // a repeated index keeps its first line
      hopLine(F, 1, "msg:a->b", "msg:b->a"),
      hopLine(F, 2, "msg:b->a", "msg:a->b"), // a cycle
      hopLine(F, 3, huge, huge, { verdict: "x".repeat(5000), assumptions: Array(1000).fill("y".repeat(5000)), rung: 7 }),
      hopLine(F, 4, "input:nowhere", "tool=nothing-like-this"),
      ...[-1, 1.5, 1e9, "2", null].map((index) => ({ ...hopLine(F, 0, "input:bad-index", TARGET), chain_hop: { index, from: "a", to: "b" } })),
      ...["a string", [1, 2], null, { index: 5 }, { index: 6, from: 3, to: "b" }, { index: 7, from: "", to: "b" }].map((chain_hop) => ({
        ...hopLine(F, 0, "x", "y"),
        chain_hop,
      })),
      hopLine(F, 8, "input:numeric-verdict", TARGET, { verdict: 42 }), // read as the text "42"
      ...Array.from({ length: 3 * CHAIN_MAX }, (_, i) => hopLine(F, 9 + i, `msg:hop${i}->hop${i + 1}`, `msg:hop${i + 1}->hop${i + 2}`)),
    ]);
    const inv = investigate(readRun(d));
    const c = emailOf(inv).chain!;
    expect(c.attribution).toBe(F);
    // indexes 0–4, 8 and 9–31 are kept: 5–7 were malformed, the rest past the cap
    expect(c.hops.length).toBe(CHAIN_MAX - 3);
    expect(c.hops.at(-1)!.from).toBe(`msg:hop${CHAIN_MAX - 10}->hop${CHAIN_MAX - 9}`);
    expect(c.lines).toHaveLength(c.hops.length);
    expect(c.hops.slice(0, 5).map((h) => h.from.slice(0, 40))).toEqual([evil, "msg:a->b", "msg:b->a", `input:${"A".repeat(34)}`, "input:nowhere"]);
    expect(c.hops.some((h) => h.from.includes("duplicate") || h.from.includes("bad-index") || h.from === "x")).toBe(false);
    for (const h of c.hops) {
      expect(h.from.length + h.to.length).toBeLessThanOrEqual(2002);
      expect(h.test.verdict.length).toBeLessThanOrEqual(41);
      expect(h.test.assumptions?.length ?? 0).toBeLessThanOrEqual(12);
      expect(h.test.rung === undefined || [1, 2, 3].includes(h.test.rung)).toBe(true);
    }
    expect(JSON.stringify(c).length).toBeLessThan(200_000);
  });
});
