/**
 * The sections of a case file (see case.ts), each written into the blocks with every claim linked
 * to its evidence: the title and verify line, what happened, the probable cause and its causing
 * spans, the handoff chain, the other inputs, tests others wrote, the failure shape, fix checks,
 * the recorded path, the log and the evidence table.
 */
import { attributionNotTested } from "../analysis/not-tested";
import type { RunData } from "../log/reader";
import type { TestRecord } from "../log/testslog";
import type { verifyRunData } from "../log/verify";
import type { RunModel } from "../graph/model";
import { buildGraph, lineage, nodeId, type targetHits } from "../graph/graph";
import { writerLabel } from "../analysis/foreign";
import { LOCAL_WRITER } from "../log/writers";

export type Inline = string | { link: string; text: string; title?: string } | { code: string } | { strong: string };
export type Block =
  { h: 1 | 2 | 3; text: string } | { p: Inline[] } | { ul: Inline[][] } | { quote: Inline[] } | { table: { head: string[]; rows: Inline[][][] } };

/** One link to evidence: what it points at, and the hash that must be found there. */
export interface EvidenceLink {
  kind: "event" | "test" | "blob";
  href: string;
  /** events: seq; tests: line. */
  seq?: number;
  line?: number;
  hash: string;
}

export const pct = (x: unknown) => `${Math.round(Number(x) * 100)}%`;
export const sgn = (x: unknown) => {
  const n = Number(x);
  return (n >= 0 ? "+" : "−") + Math.abs(n).toFixed(2);
};
export const ivl = (ci: unknown) => (Array.isArray(ci) && ci.length === 2 ? `[${sgn(ci[0])}, ${sgn(ci[1])}]` : "[?]");
export const short = (s: string, n = 100) => (s.length <= n ? s : s.slice(0, n - 1) + "…");

type Verified = ReturnType<typeof verifyRunData>;
export type Hit = ReturnType<typeof targetHits>[number];
type InputEvent = RunModel["inputs"][number];

/** What every section writes with: the run, its model, the blocks so far and the links to evidence (each link recorded). */
export interface CaseContext {
  whole: RunData;
  run: RunData;
  m: RunModel;
  target: string;
  blocks: Block[];
  evidence: EvidenceLink[];
  evLink(e: { seq: number; line: number; hash: string }, text?: string): Inline;
  testLink(t: TestRecord): Inline;
  blobLink(ref: string, text?: string): Inline;
}

export function caseContext(whole: RunData, run: RunData, m: RunModel, target: string, rel: string): CaseContext {
  const evidence: EvidenceLink[] = [];
  return {
    whole,
    run,
    m,
    target,
    blocks: [],
    evidence,
    evLink(e, text) {
      const href = `${rel}/events.jsonl#L${e.line}`;
      evidence.push({ kind: "event", href, seq: e.seq, hash: e.hash });
      return { link: href, text: text ?? `event #${e.seq} · ${e.hash.slice(0, 12)}`, title: `event hash ${e.hash}` };
    },
    testLink(t) {
      const hash = String(t.hash ?? "");
      const href = `${rel}/tests.jsonl#L${t.line}`;
      evidence.push({ kind: "test", href, line: t.line, hash });
      // the writer is named when it is not this machine (a test pulled from a collector)
      const by = t.foreign || (t.by && t.by !== LOCAL_WRITER) ? `by ${writerLabel(t.by)}${t.foreign ? " (NOT the run's writer)" : ""}` : "";
      return {
        link: href,
        text: `tests.jsonl line ${t.line}${hash ? ` · ${hash.slice(0, 12)}` : " (unchained)"}${by ? ` · ${by}` : ""}`,
        title: `${hash ? `test hash ${hash}` : "this line carries no hash"}${by ? `; written ${by}` : ""}`,
      };
    },
    blobLink(ref, text) {
      const hex = ref.replace(/^sha256:/, "");
      const href = `${rel}/blobs/${hex}.json`;
      evidence.push({ kind: "blob", href, hash: ref });
      return { link: href, text: text ?? `blob ${hex.slice(0, 12)}`, title: ref };
    },
  };
}

const figure = (t: TestRecord): string => `${pct(t.p_with)} → ${pct(t.p_without)} of replays, effect ${sgn(t.effect)} ${ivl(t.ci)}, n=${t.n}`;

/** The title, what was verified and who wrote the log, and a warning about tests others wrote. */
export function headerSection(c: CaseContext, hits: Hit[], v: Verified, foreign: TestRecord[]): void {
  const { blocks, m, target } = c;
  const first = hits[0];
  const title = first ? `${first.tool} by ${first.agent} in ${m.runId}` : `${target} in ${m.runId}`;
  blocks.push({ h: 1, text: `Case: ${title}` });
  blocks.push({
    p: [
      "Target ",
      { code: target },
      `. Log: ${v.ok ? `verified — ${v.events} events, the hash chain and every hash check out` : `FAILS verify — ${v.first?.message ?? "see below"}`}. Written by ${runWriterText(c.whole.writer)}.`,
    ],
  });
  if (foreign.length) {
    blocks.push({
      p: [
        {
          strong: `Warning: ${foreign.length} test${foreign.length === 1 ? " of this action was" : "s of this action were"} written by someone other than the run's writer`,
        },
        ` (${[...new Set(foreign.map((t) => writerLabel(t.by)))].join(", ")}). ${foreign.length === 1 ? "It is" : "They are"} listed under "Tests written by others" and not counted: a test line is a claimed result, and only the run's writer's and this machine's claims are counted here. Re-run ${foreign.length === 1 ? "it" : "them"} to count ${foreign.length === 1 ? "it" : "them"}.`,
      ],
    });
  }
}

export function whatHappened(c: CaseContext, hits: Hit[]): void {
  const { blocks, m, target } = c;
  blocks.push({ h: 2, text: "What happened" });
  if (!hits.length) blocks.push({ p: [`The target did not happen in this run: nothing matches ${target}.`] });
  for (const a of hits) {
    const dec = a.decision ? m.byId.get(a.decision) : undefined;
    blocks.push({
      p: [
        `${a.agent} called `,
        { code: `${a.tool}(${short(m.canonical(a.args_ref) ?? "?", 160)})` },
        ` — ${a.status}${a.mode && a.mode !== "live" ? `, ${a.mode}` : ""} (`,
        c.evLink(a as never),
        ", arguments ",
        c.blobLink(String(a.args_ref)),
        dec ? `; asked for by ${dec.agent}'s model call ` : "",
        ...(dec ? [c.evLink(dec)] : []),
        ").",
      ],
    });
  }
  blocks.push({
    p: [`The run's tool calls, in order: ${m.actions.map((a) => `${a.tool}${a.status === "blocked" ? " (blocked)" : ""}`).join(", ") || "none"}.`],
  });
}

/** The tests recorded for the target, sorted by what they found. */
export interface Findings {
  /** The latest attribution's id, if any test names one. */
  attr: string | undefined;
  attrTests: TestRecord[];
  /** Each single suspect's test (not a group, baseline or carrier hop), by its intervention. */
  singles: Map<string, TestRecord>;
  hops: TestRecord[];
  causes: TestRecord[];
  primary: TestRecord[];
  contributing: TestRecord[];
  ruledOut: TestRecord[];
  other: TestRecord[];
  /** The input event a spec `input:…` names. */
  inputEv: (spec: string) => InputEvent | undefined;
}

export function findings(run: RunData, m: RunModel, target: string): Findings {
  const tests = run.tests.filter((t) => t.target === target);
  const attrIds = [...new Set(tests.filter((t) => typeof t.attribution === "string" && !t.span_of && !t.shape_test).map((t) => String(t.attribution)))];
  const attr = attrIds.at(-1);
  const attrTests = attr
    ? tests.filter((t) => t.attribution === attr && !t.span_of && !t.shape_test)
    : tests.filter((t) => !t.fix_check && !t.span_of && !t.shape_test && t.scope !== "decision");
  const singles = new Map<string, TestRecord>();
  // a suspect that only carried a root cause's words to the action is a hop of its chain, not a cause
  const hops = attrTests.filter((t) => isHop(t.chain_hop)).sort((a, b) => (a.chain_hop as ChainMark).index - (b.chain_hop as ChainMark).index);
  const carrier = (t: TestRecord) => isHop(t.chain_hop) && t.chain_hop.index > 0;
  for (const t of attrTests) if (!t.group && !t.baseline && !String(t.intervention).includes(" | ") && !carrier(t)) singles.set(String(t.intervention), t);
  const causes = [...singles.values()].filter((t) => t.verdict === "causal");
  return {
    attr,
    attrTests,
    singles,
    hops,
    causes,
    primary: causes.filter((t) => t.role !== "contributing"),
    contributing: causes.filter((t) => t.role === "contributing"),
    ruledOut: [...singles.values()].filter((t) => t.verdict === "ruled-out"),
    other: [...singles.values()].filter((t) => t.verdict !== "causal" && t.verdict !== "ruled-out"),
    inputEv: (spec) =>
      spec.startsWith("input:")
        ? m.inputs.find((e) => `input:${e.source}` === spec || spec === `input:${String(e.source).replace(/[*?[]/g, (ch) => `[${ch}]`)}`)
        : undefined,
  };
}

export function probableCause(c: CaseContext, f: Findings, anyForeign: boolean): void {
  const { blocks, m, target } = c;
  blocks.push({ h: 2, text: "Probable cause" });
  if (!f.attrTests.length)
    blocks.push({
      p: [
        `No replay test of this action${anyForeign ? " by the run's writer or this machine" : ""} is recorded yet: run `,
        { code: `causeway attribute ${m.runId} --target "${target}" --spans` },
        " first.",
      ],
    });
  else if (!f.causes.length)
    blocks.push({ p: [`No input was confirmed as a cause by the ${f.attrTests.length} recorded test${f.attrTests.length === 1 ? "" : "s"}.`] });
  if (f.attrTests.length) blocks.push({ p: [rungSentence(f.attrTests)] });
  // what this replay could not test (rung 1: not in the one call re-sent): neither a cause nor ruled out
  const nt = f.attr ? attributionNotTested(f.attrTests) : undefined;
  if (nt)
    blocks.push({
      p: [`Not tested, so neither a cause nor ruled out (tests.jsonl line ${nt.line}): `, nt.items.map((x) => `${x.spec}: ${x.reason}`).join("; "), "."],
    });
  for (const t of f.primary.length ? f.primary : f.contributing) {
    const spec = String(t.intervention);
    const ev = f.inputEv(spec);
    blocks.push({
      p: [
        { strong: spec },
        ` — ${t.role ?? "confirmed"} cause: without it the action goes from ${figure(t)} (`,
        c.testLink(t),
        ")",
        ...(ev ? ["; the input: ", c.evLink(ev), ", content ", c.blobLink(String(ev.ref))] : []),
        ".",
      ],
    });
    causingSpans(c, t, spec, ev, f.attr);
  }
}

/** The span of a cause's content that did the harm, where span tests narrowed it. */
function causingSpans(c: CaseContext, t: TestRecord, spec: string, ev: InputEvent | undefined, attr: string | undefined): void {
  const { blocks, m, run, target } = c;
  const spanTests = run.tests.filter((s) => s.span_of === spec && (!attr || s.attribution === attr) && s.target === target);
  const marked = spanTests.filter((s) => s.causing_span);
  const text = ev ? m.value(ev.ref) : undefined;
  if (marked.length && typeof text === "string") {
    const chars = Array.from(text);
    for (const s of marked) {
      const cs = s.causing_span as { ranges: [number, number][]; level: string; joint: boolean };
      const parts = cs.ranges.map(([a, b]) => chars.slice(a, b).join(""));
      blocks.push({ h: 3, text: `Causing span${cs.ranges.length > 1 ? "s (removed together)" : ""}` });
      for (const part of parts) blocks.push({ quote: [part] });
      const overlapsWhole = Array.isArray(s.ci) && Array.isArray(t.ci) && Number(s.ci[0]) <= Number(t.ci[1]) && Number(t.ci[0]) <= Number(s.ci[1]);
      blocks.push({
        p: [
          `Characters ${cs.ranges.map(([a, b]) => `${a}–${b}`).join(", ")} of ${chars.length} (a ${cs.level}${cs.joint ? "; each part is enough on its own" : ""}). Removing only this: ${figure(s)} (`,
          c.testLink(s),
          `). ${overlapsWhole ? "Its interval overlaps the whole input's: the same effect." : "Its interval does not overlap the whole input's."} ${spanTests.length} span test${spanTests.length === 1 ? "" : "s"} narrowed it; the rest of the input was not needed.`,
        ],
      });
    }
  } else if (ev) blocks.push({ p: ["Not narrowed to a span yet (", { code: "causeway attribute … --spans" }, ")."] });
}

export function chainHops(c: CaseContext, hops: TestRecord[]): void {
  if (!hops.length) return;
  c.blocks.push({ h: 3, text: "How its words reached the action" });
  c.blocks.push({
    p: ["Each hop below was tested on its own: without it, the action goes from the figure shown. The words passed between agents; only the first is a cause."],
  });
  c.blocks.push({
    ul: hops.map((t) => {
      const h = t.chain_hop as ChainMark;
      return [{ code: h.from }, " → ", { code: h.to }, `: ${figure(t)} (`, c.testLink(t), ")"];
    }),
  });
}

export function otherInputs(c: CaseContext, f: Findings): void {
  c.blocks.push({ h: 2, text: "Contributing and ruled-out inputs" });
  const rows: Inline[][][] = [];
  for (const [list, what] of [
    [f.primary.length ? f.contributing : [], "contributing"],
    [f.ruledOut, "ruled out"],
    [f.other, "not decided"],
  ] as const) {
    for (const t of list)
      rows.push([
        [{ code: String(t.intervention) }],
        [what],
        [`${pct(t.p_with)} → ${pct(t.p_without)}`],
        [`${sgn(t.effect)} ${ivl(t.ci)}`],
        [String(t.n)],
        [c.testLink(t)],
      ]);
  }
  const group = f.attrTests.find((t) => t.group || String(t.intervention).includes(" | "));
  // below a lead suspect (tested alone first) the group test removes the others, not every suspect
  const together =
    group && [...f.singles.keys()].some((sp) => !String(group.intervention).split(" | ").includes(sp)) ? "the others together" : "all suspects together";
  if (group)
    rows.push([
      [{ code: short(String(t0(group.intervention)), 80) }],
      [together],
      [`${pct(group.p_with)} → ${pct(group.p_without)}`],
      [`${sgn(group.effect)} ${ivl(group.ci)}`],
      [String(group.n)],
      [c.testLink(group)],
    ]);
  if (rows.length) c.blocks.push({ table: { head: ["Input", "Finding", "With → without", "Effect [95% interval]", "n", "Evidence"], rows } });
  else c.blocks.push({ p: ["None tested besides the cause."] });
}

export function foreignTests(c: CaseContext, foreign: TestRecord[]): void {
  c.blocks.push({ h: 2, text: "Tests written by others (not counted)" });
  c.blocks.push({
    table: {
      head: ["Input", "Claimed finding", "With → without", "Effect [95% interval]", "n", "Written by", "Evidence"],
      rows: foreign.map((t) => [
        [{ code: String(t.intervention) }],
        [String(t.verdict ?? "?") + (t.role ? ` (${t.role})` : "")],
        [`${pct(t.p_with)} → ${pct(t.p_without)}`],
        [`${sgn(t.effect)} ${ivl(t.ci)}`],
        [String(t.n)],
        [{ strong: writerLabel(t.by) }],
        [c.testLink(t)],
      ]),
    },
  });
}

export function failureShape(c: CaseContext, f: Findings): void {
  const { blocks, run, target } = c;
  blocks.push({ h: 2, text: "Failure shape" });
  const shapeTests = run.tests.filter((t) => t.shape_test && t.target === target && (!f.attr || t.attribution === f.attr));
  if (!shapeTests.length) {
    blocks.push({
      p: [
        f.causes.length === 1 ? "Single: one confirmed cause." : f.causes.length > 1 ? "Several causes, their combination not tested." : "No confirmed cause.",
      ],
    });
    return;
  }
  const byPair = new Map<string, TestRecord[]>();
  for (const t of shapeTests) {
    const k = JSON.stringify((t.shape_test as { causes: string[] }).causes);
    byPair.set(k, [...(byPair.get(k) ?? []), t]);
  }
  for (const [k, ts] of byPair) {
    const [A, B] = JSON.parse(k) as string[];
    const st = (arm: string) => ts.find((t) => (t.shape_test as { arm: string }).arm === arm);
    const shape = String((ts[0].shape_test as { shape: string }).shape);
    const meaning =
      shape === "either"
        ? "either is enough on its own (redundant)"
        : shape === "both"
          ? "both are needed (conjunctive)"
          : shape === "single"
            ? "one of them is enough alone"
            : "unclear";
    blocks.push({ p: [{ strong: shape }, ` — ${A} and ${B}: ${meaning}.`] });
    const ab = st("ab");
    const a = st("a_alone");
    const b = st("b_alone");
    const r2: Inline[][][] = [];
    if (ab) r2.push([["both"], [pct(ab.p_with)], [c.testLink(ab)]]);
    if (a) r2.push([[`${A} only`], [pct(a.p_with)], [c.testLink(a)]]);
    if (b) r2.push([[`${B} only`], [pct(b.p_with)], [c.testLink(b)]]);
    if (ab) r2.push([["neither"], [pct(ab.p_without)], [c.testLink(ab)]]);
    blocks.push({ table: { head: ["Present", "Action happens", "Evidence"], rows: r2 } });
    const line: Inline[] = ["Contrasts: "];
    if (ab) line.push(`both vs neither ${sgn(ab.effect)} ${ivl(ab.ci)}; `);
    if (a) line.push(`${A} only vs neither ${sgn(a.effect)} ${ivl(a.ci)}; `);
    if (b) line.push(`${B} only vs neither ${sgn(b.effect)} ${ivl(b.ci)}.`);
    blocks.push({ p: line });
  }
}

export function fixChecks(c: CaseContext, harms: TestRecord[]): void {
  const { blocks, run, m, target } = c;
  blocks.push({ h: 2, text: "Fix check" });
  if (!harms.length) blocks.push({ p: ["No fix checked yet: ", { code: `causeway fix-check ${m.runId} --fix SPEC --harm "${target}"` }, "."] });
  for (const h of harms) {
    const keeps = run.tests.filter((t) => t.fix_check === h.fix_check && t.fix_role === "keep");
    const changes = Array.isArray(h.changes) ? (h.changes as { after: string; kind: string; removed?: { text: string }[] }[]) : [];
    blocks.push({
      p: [
        { strong: String(h.fix_verdict ?? "?") },
        " — fix ",
        { code: (Array.isArray(h.fix) ? h.fix : [h.intervention]).join(" + ") },
        `: the harm goes from ${pct(h.p_with)} of replays without the fix to ${pct(h.p_without)} with it, ${sgn(h.effect)} ${ivl(h.ci)}, n=${h.n} (`,
        c.testLink(h),
        ")",
        ...changes.flatMap((ch) => ["; changed content ", c.blobLink(ch.after)]),
        ".",
      ],
    });
    const kr: Inline[][][] = keeps.map((k) => [
      [{ code: String(k.target) }],
      [String(k.keep_status)],
      [`${pct(k.p_with)} → ${pct(k.p_without)}`],
      [`${sgn(k.effect)} ${ivl(k.ci)}`],
      [c.testLink(k)],
    ]);
    if (kr.length) blocks.push({ table: { head: ["Intended action", "With the fix", "Without → with", "Effect [95% interval]", "Evidence"], rows: kr } });
    const ex = Array.isArray(h.fix_excluded) ? (h.fix_excluded as { target: string; reason: string }[]) : [];
    if (ex.length) blocks.push({ ul: ex.map((e) => [{ code: e.target }, ` not counted as intended: ${e.reason}`]) });
  }
}

export function recordedPath(c: CaseContext, first: Hit | undefined, f: Findings): void {
  const { blocks, m } = c;
  blocks.push({ h: 2, text: "Recorded path" });
  if (!first) return;
  const g = buildGraph(m, { infer: false, reuse: false });
  const chains = lineage(g, nodeId(first.id));
  const causeEv = f.primary.map((t) => f.inputEv(String(t.intervention))).find(Boolean);
  const chain = (causeEv && chains.find((ch) => ch[0] === nodeId(causeEv.id))) ?? chains[0];
  if (chain) {
    blocks.push({
      ul: chain.map((id) => {
        const n = g.nodes.get(id)!;
        const e = m.byId.get(n.eventId)!;
        return [`${n.type} `, { code: n.label }, ` [${n.agent}] `, c.evLink(e)];
      }),
    });
  } else blocks.push({ p: ["No observed path into the action."] });
}

export function theLog(c: CaseContext, v: Verified): void {
  const { blocks, run, whole } = c;
  blocks.push({ h: 2, text: "The log" });
  const testProblems = run.problems.filter((p) => p.file === "tests.jsonl");
  blocks.push({
    ul: [
      [v.ok ? `verify: PASS — ${v.events} events, hash chain intact, every blob matches its hash` : `verify: FAIL — ${v.first?.message}`],
      [
        `tests.jsonl: ${whole.tests.length} tests, ${whole.tests.filter((t) => t.chained).length} chained${whole.tests.length > run.tests.length ? `, ${whole.tests.length - run.tests.length} written by others (not counted)` : ""}${testProblems.length ? `; ${testProblems.map((p) => p.message).join("; ")}` : ""}`,
      ],
      ["The chain is unsigned: it shows edits, not who may rewrite the whole log."],
    ],
  });
}

/** Every piece of evidence linked above, once each. */
export function evidenceTable(c: CaseContext): void {
  c.blocks.push({ h: 2, text: "Evidence" });
  const seen = new Set<string>();
  const erows: Inline[][][] = [];
  for (const e of c.evidence) {
    if (seen.has(e.href)) continue;
    seen.add(e.href);
    erows.push([
      [e.kind],
      [{ link: e.href, text: e.href, title: e.kind === "blob" ? e.hash : `${e.kind} hash ${e.hash}` }],
      [e.kind === "event" ? `seq ${e.seq}` : e.kind === "test" ? `line ${e.line}` : "—"],
      [{ code: e.hash || "(none)" }],
    ]);
  }
  c.blocks.push({ table: { head: ["Kind", "Where", "At", "Hash"], rows: erows } });
}

function runWriterText(w: string | null | undefined): string {
  if (w === null) return "a writer the collector did not record";
  return w === undefined || w === "local" ? "this machine (local)" : w;
}

/** What tests.jsonl records on a test that is a hop of a cause's handoff chain (index 0: the root). */
interface ChainMark {
  index: number;
  from: string;
  to: string;
}
function isHop(x: unknown): x is ChainMark {
  const h = x as ChainMark | null;
  return !!h && typeof h === "object" && Number.isInteger(h.index) && h.index >= 0 && typeof h.from === "string" && typeof h.to === "string";
}

function t0(x: unknown): string {
  return String(x);
}

const RUNG_WORDS: Record<number, string> = {
  1: "rung 1, one recorded model call re-sent with and without the input",
  2: "rung 2, without the program: the recorded requests re-sent to the model, tools served from the recording, each agent re-simulated",
  3: "rung 3, the program re-run with tools served from the recording",
};

/** How the tests replayed (their rung; a test recorded before rungs were named re-ran the program), with what they assumed. */
function rungSentence(tests: readonly TestRecord[]): string {
  const rungs = [...new Set(tests.map((t) => (t.rung === 1 || t.rung === 2 ? t.rung : 3)))].sort();
  const assumed = [...new Set(tests.flatMap((t) => (Array.isArray(t.assumptions) ? t.assumptions.map(String) : [])))];
  return `Replayed by ${rungs.map((r) => RUNG_WORDS[r]).join("; and by ")}.${assumed.length ? ` Assumed: ${assumed.join("; ")}.` : ""}`;
}
