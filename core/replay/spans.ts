/**
 * The causing span: once an input is a confirmed cause, which words in it did the harm?
 *
 * Narrowing is adaptive, by removal of character spans (`span:` interventions), paragraph →
 * sentence → clause. At each level every part of the current span is tested on its own:
 *  - exactly one part has the whole span's effect (causal, interval overlapping the parent's):
 *    narrow into it;
 *  - several sentences (or paragraphs) each have it: each is needed — every one of them is a
 *    causing span, narrowed on its own; several clauses of one sentence each needed: the sentence
 *    is the unit (it stops there);
 *  - none has it alone: leave-one-in tests say which parts are each enough on their own
 *    (redundant); removed together they are one causing span with several ranges (a joint cause
 *    spread over two sentences comes out as both).
 * Every span test is corrected (Bonferroni) for the attribution's family plus the most span tests
 * the narrowing may run, so the whole investigation keeps its error rate.
 */
import { RunModel } from "../graph/model";
import { spanSpec } from "../specs/apply";
import { ReplayError, type ReplayContext } from "./context";
import { appendTestWithContent } from "./edited-content";
import { followUpTest, type FollowUpOptions } from "./run-test";
import type { TestResult } from "./test-record";

export type Level = "whole" | "paragraph" | "sentence" | "clause";
const LEVELS: Level[] = ["paragraph", "sentence", "clause"];

/** Most span tests one narrowing runs (its share of the family). */
export const MAX_SPAN_TESTS = 24;

export interface CausingSpan {
  /** [start, end) in code points of the input's content; several when the parts are needed together. */
  ranges: [number, number][];
  texts: string[];
  level: Level;
  /** The span intervention that removes exactly this. */
  spec: string;
  effect: number;
  ci: [number, number];
  p_with: number;
  p_without: number;
  n: number;
  /** Removed together: each range is enough on its own (redundant parts). */
  joint?: boolean;
  /** The interval overlaps the whole input's: same effect. */
  overlaps_whole: boolean;
}

export interface SpanResult {
  /** The cause narrowed (an input: spec). */
  cause: string;
  /** The input's event and content: where the spans are. */
  input: { event_id: string; seq: number; line: number; hash: string; ref: string; source: string; length: number };
  whole: { effect: number; ci: [number, number]; p_with: number; p_without: number; n: number };
  spans: CausingSpan[];
  tests: TestResult[];
  family: number;
  stopped: "done" | "budget";
  note?: string;
}

export interface SpanOptions extends FollowUpOptions {
  /** The confirmed cause: an input: spec naming one input, and its test. */
  cause: string;
  whole: { effect: number; ci: [number, number]; p_with: number; p_without: number; n: number };
}

/** fnmatch-escaped: the spec names exactly this source. */
export function exactInput(source: string): string {
  return "input:" + source.replace(/[*?[]/g, (c) => `[${c}]`);
}

/** The recorded input a cause spec names, when it names exactly one with text content. */
export function inputOfCause(m: RunModel, cause: string): { ev: RunModel["inputs"][number]; text: string } | string {
  if (!cause.startsWith("input:") || cause.includes("|")) return "only an input can be narrowed to a span";
  const glob = cause.slice(6);
  const evs = m.inputs.filter((e) => e.kind !== "task" && (e.source === glob || exactInput(String(e.source)) === cause));
  const refs = new Set(evs.map((e) => e.ref));
  if (!evs.length) return `no input ${glob} in the run`;
  if (refs.size > 1) return `${glob} names ${refs.size} different contents`;
  const text = m.value(evs[0].ref);
  if (typeof text !== "string") return "its content is not text";
  return { ev: evs[0], text };
}

/** Parts of [a, b) of the text at one level, trimmed of whitespace, in code points. */
export function segments(text: string, range: [number, number], level: Level): [number, number][] {
  const chars = Array.from(text);
  const sub = chars.slice(range[0], range[1]).join("");
  // UTF-16 index in `sub` → code point offset in the text
  const cp = new Int32Array(sub.length + 1);
  for (let i = 0, k = 0; i <= sub.length; i++) {
    cp[i] = range[0] + k;
    if (i < sub.length && !(sub.charCodeAt(i) >= 0xd800 && sub.charCodeAt(i) < 0xdc00)) k++;
  }
  const cuts: number[] = [0];
  const re = level === "paragraph" ? /\n[ \t]*\n\s*/g : level === "sentence" ? /(?<=[.!?]["')\]]?)\s+(?=\S)/g : /(?<=[,;:])\s+(?=\S)|\s+(?=[—–-]\s)/g;
  for (let m = re.exec(sub); m; m = re.exec(sub)) {
    if (m[0] === "") {
      re.lastIndex++;
      continue;
    }
    cuts.push(m.index, m.index + m[0].length);
  }
  cuts.push(sub.length);
  const out: [number, number][] = [];
  for (let i = 0; i < cuts.length; i += 2) {
    let s = cuts[i];
    let e = cuts[i + 1];
    while (s < e && /\s/.test(sub[s])) s++;
    while (e > s && /\s/.test(sub[e - 1])) e--;
    if (e > s) out.push([cp[s], cp[e]]);
  }
  return out;
}

const overlap = (a: [number, number], b: [number, number]) => a[0] <= b[1] && b[0] <= a[1];

/** Narrows a confirmed cause (one input) to its causing span(s). */
export async function causingSpans(ctx: ReplayContext, opts: SpanOptions): Promise<SpanResult> {
  const found = inputOfCause(ctx.model, opts.cause);
  if (typeof found === "string") throw new ReplayError(`cannot narrow ${opts.cause}: ${found}`);
  const { ev, text } = found;
  const item = exactInput(String(ev.source));
  const length = Array.from(text).length;
  const family = (opts.family ?? 1) + MAX_SPAN_TESTS;
  const tests: TestResult[] = [];
  let stopped = "done" as SpanResult["stopped"];
  const slice = (r: [number, number]) => Array.from(text).slice(r[0], r[1]).join("");
  const test = async (ranges: [number, number][], baseline?: [number, number][]): Promise<TestResult | null> => {
    if (tests.length >= MAX_SPAN_TESTS) {
      stopped = "budget";
      return null;
    }
    const r = await followUpTest(
      ctx,
      opts,
      family,
      spanSpec(item, ranges),
      baseline?.length ? [spanSpec(item, baseline)] : undefined,
      opts.onProgress ? (p) => opts.onProgress!({ ...p, phase: `span test ${tests.length + 1}` }) : undefined,
    );
    tests.push(r);
    return r;
  };
  type Res = { effect: number; ci: [number, number]; p_with: number; p_without: number; n: number };
  const same = (r: TestResult | null, parent: Res): r is TestResult => !!r && r.verdict === "causal" && overlap(r.ci, parent.ci);
  const span = (ranges: [number, number][], r: Res, level: Level, joint = false): CausingSpan => ({
    ranges,
    texts: ranges.map(slice),
    level,
    spec: spanSpec(item, ranges),
    effect: r.effect,
    ci: r.ci,
    p_with: r.p_with,
    p_without: r.p_without,
    n: r.n,
    ...(joint ? { joint } : {}),
    overlaps_whole: overlap(r.ci, opts.whole.ci),
  });

  const narrow = async (range: [number, number], parent: Res, from: number, level: Level): Promise<CausingSpan[]> => {
    let lvl = from;
    let kids: [number, number][] = [];
    for (; lvl < LEVELS.length; lvl++) {
      kids = segments(text, range, LEVELS[lvl]);
      if (kids.length >= 2) break;
    }
    if (kids.length < 2) {
      // one part: its trimmed extent is the span
      const k = kids[0] ?? range;
      return [span([k], parent, level)];
    }
    const results: (TestResult | null)[] = [];
    for (const k of kids) results.push(await test([k]));
    const causal = kids.map((k, i) => [k, results[i]] as const).filter(([, r]) => same(r, parent)) as [[number, number], TestResult][];
    if (causal.length === 1) return narrow(causal[0][0], causal[0][1], lvl + 1, LEVELS[lvl]);
    if (causal.length >= 2) {
      if (LEVELS[lvl] === "clause") return [span([range], parent, level)]; // several clauses of one sentence, each needed
      const out: CausingSpan[] = [];
      for (const [k, r] of causal) out.push(...(await narrow(k, r, lvl + 1, LEVELS[lvl])));
      return out;
    }
    if (results.some((r) => r === null) || kids.length > 6) return [span([range], parent, level)];
    // none alone: which parts are each enough on their own?
    const enough: [number, number][] = [];
    for (const k of kids) {
      const r = await test(
        kids,
        kids.filter((x) => x !== k),
      );
      if (r?.verdict === "causal") enough.push(k);
    }
    if (enough.length >= 2 && enough.length < kids.length) {
      const r = await test(enough);
      if (same(r, parent)) return [span(enough, r, LEVELS[lvl], true)];
    }
    return [span([range], parent, level)];
  };

  const spans = await narrow([0, length], opts.whole, 0, "whole");
  if (opts.save !== false) {
    // the tests whose span is a causing span are marked, so a case file can name it from the log
    const final = new Set(spans.map((sp) => sp.spec));
    for (const t of tests) {
      const sp = final.has(t.intervention) ? spans.find((x) => x.spec === t.intervention) : undefined;
      appendTestWithContent(ctx, {
        ...t,
        span_of: opts.cause,
        ...(opts.attribution ? { attribution: opts.attribution } : {}),
        ...(sp ? { causing_span: { ranges: sp.ranges, level: sp.level, joint: !!sp.joint } } : {}),
      });
    }
  }
  const hash = String((ev as { hash?: unknown }).hash ?? "");
  return {
    cause: opts.cause,
    input: { event_id: ev.id, seq: ev.seq, line: ev.line, hash, ref: String(ev.ref), source: String(ev.source), length },
    whole: opts.whole,
    spans,
    tests,
    family,
    stopped,
    ...(stopped === "budget" ? { note: `stopped after ${MAX_SPAN_TESTS} span tests: the spans so far` } : {}),
  };
}
