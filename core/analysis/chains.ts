/**
 * Find the cause's chains, rebuilt from tests.jsonl so they survive a reload and reach the static
 * report: attribute() appends each hop's test marked `chain_hop: {index, from, to}` (index 0: the
 * root) with its `attribution` id. Per target, the latest attribution recorded wins (the one the
 * case file reads): its hops, in index order, are the chain; a later attribution that followed no
 * handoff leaves no chain. The lines are untrusted: a mark that is not an object with a whole
 * index and text ids is ignored, a repeated index keeps its first line, ids and verdicts are
 * clipped and at most {@link CHAIN_MAX} hops are kept (core/analysis/tested.ts). Lines written by
 * anyone but the run's writer (foreign.ts) never join the counted chain: the latest foreign
 * attribution's chain is kept apart, with its writer, to be shown marked.
 */
import type { TestRecord } from "../log/testslog";
import type { RunModel } from "../graph/model";
import { targetHits } from "../graph/graph";
import { CHAIN_MAX, chainOf } from "./tested";
import type { RecordedChain } from "./types";

/** Distinct targets whose chains are rebuilt (a forged file can name many). */
export const CHAIN_TARGETS_MAX = 200;
const ATTRIBUTION_CHARS = 64;
const TARGET_CHARS = 1000;

interface Mark {
  index: number;
  from: string;
  to: string;
}

function markOf(x: unknown): Mark | undefined {
  if (!x || typeof x !== "object" || Array.isArray(x)) return undefined;
  const h = x as Record<string, unknown>;
  if (typeof h.index !== "number" || !Number.isInteger(h.index) || h.index < 0 || h.index >= CHAIN_MAX) return undefined;
  if (typeof h.from !== "string" || !h.from || typeof h.to !== "string" || !h.to) return undefined;
  return { index: h.index, from: h.from, to: h.to };
}

/** A test that belongs to an attribution (not a causing-span or failure-shape follow-up). */
const attributionOf = (t: TestRecord): string | undefined =>
  typeof t.attribution === "string" && t.attribution && !t.span_of && !t.shape_test ? t.attribution.slice(0, ATTRIBUTION_CHARS) : undefined;

/** The chain of one attribution's hop tests, or undefined when none is well formed. */
function chainFrom(hopTests: readonly TestRecord[], target: string, attribution: string, foreign: boolean): RecordedChain | undefined {
  const byIndex = new Map<number, { mark: Mark; t: TestRecord }>();
  for (const t of hopTests) {
    const mark = markOf(t.chain_hop);
    if (mark && !byIndex.has(mark.index)) byIndex.set(mark.index, { mark, t });
  }
  const ordered = [...byIndex.values()].sort((a, b) => a.mark.index - b.mark.index);
  const kept = ordered.filter(({ mark, t }) => chainOf([{ from: mark.from, to: mark.to, test: t }])!.length);
  const hops = chainOf(kept.map(({ mark, t }) => ({ from: mark.from, to: mark.to, test: t })))!;
  if (!hops.length) return undefined;
  const by = kept.map(({ t }) => t.by).find((b) => typeof b === "string");
  return {
    attribution,
    target: target.length > TARGET_CHARS ? `${target.slice(0, TARGET_CHARS)}…` : target,
    hops,
    lines: kept.slice(0, hops.length).map(({ t }) => t.line),
    ...(foreign ? { foreign: true, ...(by !== undefined ? { by: by.slice(0, 100) } : {}) } : {}),
  };
}

/** The latest attribution's chain per target, of the counted tests or of the foreign ones. */
function latestChains(tests: readonly TestRecord[], foreign: boolean): Map<string, RecordedChain> {
  const latest = new Map<string, string>();
  const hopsOf = new Map<string, TestRecord[]>();
  for (const t of tests) {
    if (!!t.foreign !== foreign || typeof t.target !== "string" || !t.target) continue;
    const id = attributionOf(t);
    if (!id) continue;
    if (!latest.has(t.target) && latest.size >= CHAIN_TARGETS_MAX) continue;
    latest.delete(t.target); // re-inserted last: the map's order is the order of the latest attributions
    latest.set(t.target, id);
    if (t.chain_hop !== undefined) {
      const key = `${t.target}\u0000${id}`;
      const list = hopsOf.get(key) ?? [];
      if (list.length < CHAIN_MAX * 4) list.push(t);
      hopsOf.set(key, list);
    }
  }
  const out = new Map<string, RecordedChain>();
  for (const [target, id] of latest) {
    const c = chainFrom(hopsOf.get(`${target}\u0000${id}`) ?? [], target, id, foreign);
    if (c) out.set(target, c);
  }
  return out;
}

/** Per action id: the chain Find the cause recorded for it, and one written by others (marked). */
export function recordedChains(m: RunModel, tests: readonly TestRecord[]): Map<string, { chain?: RecordedChain; foreignChain?: RecordedChain }> {
  const out = new Map<string, { chain?: RecordedChain; foreignChain?: RecordedChain }>();
  for (const foreign of [false, true]) {
    for (const [target, c] of latestChains(tests, foreign)) {
      for (const a of targetHits(m, target)) {
        const v = out.get(a.id) ?? {};
        // an action matched by several targets keeps the chain recorded last
        const prev = foreign ? v.foreignChain : v.chain;
        if (!prev || Math.max(...prev.lines) < Math.max(...c.lines)) out.set(a.id, foreign ? { ...v, foreignChain: c } : { ...v, chain: c });
      }
    }
  }
  return out;
}
