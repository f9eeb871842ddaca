/**
 * Decision replay over HTTP (rung 1): re-send one recorded model call (recorded by an SDK adapter
 * or the gateway) to an endpoint, with the blocks an intervention matches replaced by a placeholder
 * (so the request stays valid), against the same request re-sent unchanged (a no-removal control
 * call: hosted models ignore seeds, so the recorded output is not the baseline). Both arms of a
 * pair carry the pair's seed where the API takes one (as the one-call System does). The result has
 * the shape of the in-process decision test (scope "decision") and is appended to tests.jsonl.
 *
 * The URL and the key come from the caller (flags, environment), never from the run: a run file is
 * attacker-controlled, and sending a key to an address it names would leak the key. The wire
 * pieces (rebuilding a request, where it goes, the POST) are in adapters/endpoint-replay.ts.
 */
import { canonical } from "../log/hash";
import type { RunData } from "../log/reader";
import { appendTest } from "../log/testslog";
import { RunModel } from "../graph/model";
import { matchesTarget, parseTarget } from "../specs/grammar";
import { recordChanges } from "../specs/apply";
import { newcombe } from "../stats/intervals";
import { sequentialLooks, zFor } from "../stats/corrections";
import { verdictFor, type Verdict } from "../stats/verdicts";
import { bettingNMax, sequentialBetting } from "./sequential";
import { MIN_EFFECT, newcombeNeeded, r4, testRecord, type TestEnding } from "./test-record";
import { EndpointError, rebuildRequest, withoutBlocks } from "./endpoint-replay";
import { routeFor, sendable, type EndpointOptions } from "./agentless/wire";

/** A rung-1 test: which call, what to remove, what to measure; where calls go as in {@link EndpointOptions}. */
export interface EndpointTestOptions extends EndpointOptions {
  /** Seq or id of the decision. */
  decision: number | string;
  intervention: string;
  /** Hit: the output's canonical JSON contains this text. */
  contains?: string;
  /** Hit: a tool call of the response matches these tool=/arg~ clauses. */
  target?: string;
  n?: number;
  nMax?: number;
  /** Betting: no verdict before this many pairs (the CLI's --n). */
  minPairs?: number;
  family?: number;
  minEffect?: number;
  save?: boolean;
  signal?: AbortSignal;
  onProgress?: (p: { phase: string; done: number; total: number }) => void;
  /** The first pair's seed (default 0): pair i sends seed seedBase + i in both arms, where the API takes one. */
  seedBase?: number;
  /** "betting" (default: the paired betting sequence, sequential up to nMax, or n) or "newcombe" (the reference's looks). */
  method?: "betting" | "newcombe";
  alpha?: number;
}

export async function endpointDecisionTest(run: RunData, opts: EndpointTestOptions): Promise<Record<string, unknown>> {
  const m = new RunModel(run);
  const r = rebuildRequest(m, opts.decision);
  const { codec, decision: ev } = r;
  const why = codec.notReplayable(r.body, m.value(ev.output));
  if (why) throw new EndpointError(`decision #${ev.seq} can't be re-sent: ${why}`);
  if (opts.contains === undefined && opts.target === undefined)
    throw new EndpointError("say what to measure: --contains TEXT or --target tool=NAME[,arg~TEXT]");
  const target = opts.target !== undefined ? parseTarget(opts.target) : undefined;
  const { body: without, removed: dropped, kept, edited } = withoutBlocks(r, opts.intervention);
  const removed = dropped + edited;
  // the caller's endpoint and key, never the run's; the key never printed or written, even when echoed
  const { url, headers, redactor, send } = routeFor(codec.api, r.record.url, opts);
  // both arms of a pair carry the pair's seed (where the API takes one), as the other rungs' pairs do
  const seed = (pair: number) => (opts.seedBase ?? 0) + pair;
  let pairs = 0;
  let calls = 0;
  const hit = async (body: unknown): Promise<boolean> => {
    if (opts.signal?.aborted) throw Object.assign(new Error("cancelled"), { name: "AbortError" });
    calls++;
    const res = await send(url, headers, body);
    if (target)
      return codec.toolCalls(res).some((c) => matchesTarget(target, { tool: c.name, agent: String(ev.agent), args: canonical(c.args ?? {}), result: "" }));
    return canonical(codec.output(res) ?? null).includes(opts.contains!);
  };
  /** One pair: the recorded request unchanged (control) and with the intervention, both with the pair's seed. */
  const pairHits = (k: number, treat: boolean) =>
    Promise.all([hit(sendable(codec, r.body, seed(k))), treat ? hit(sendable(codec, without, seed(k))) : Promise.resolve(false)]);
  const minEffect = opts.minEffect ?? MIN_EFFECT;
  let kWith = 0;
  let kWithout = 0;
  let i = 0;
  let ci: [number, number] = [-1, 1];
  let verdict: Verdict = "inconclusive";
  const what = target ? `tool call ${opts.target}` : `output~${opts.contains}`;
  /** The tests.jsonl record, either method: the rates so far and how the method ended. */
  const record = (ending: TestEnding, looks: number, nMax: number, method: string) => {
    const q = Math.max(1, i);
    return testRecord({
      scope: "decision",
      intervention: opts.intervention,
      target: `decision#${ev.seq} ${what}`,
      decision: ev,
      ending,
      looks,
      nMax,
      minEffect,
      // a decision's causal role reads its rates rounded
      p_with: r4(kWith / q),
      p_without: r4(kWithout / q),
      effect: (kWith - kWithout) / q,
      noise: null,
      model_calls: calls,
      method,
      rung: 1,
      assumptions: [
        "one recorded call re-sent with and without the item; what the agent would have done next (tools, later calls, other agents) is not replayed",
      ],
      changes: edited
        ? recordChanges(
            opts.save !== false ? run.dir : undefined,
            [opts.intervention],
            (ev.context ?? []).map((c) => ({ ...c, value: m.value(c.ref), fromEvent: c.from_event })),
          )
        : undefined,
      extra: {
        removed_blocks: dropped,
        kept_blocks: kept,
        ...(edited ? { edited_blocks: edited } : {}),
        endpoint: { api: codec.api, url: redactor.text(url) },
      },
    });
  };
  if ((opts.method ?? "betting") === "betting") {
    const alpha = opts.alpha ?? 0.05 / (opts.family ?? 1);
    const nMax = bettingNMax(opts.n, opts.nMax);
    const o = await sequentialBetting(
      { alpha, minEffect, nMax, minPairs: opts.minPairs, applied: removed > 0, onLook: (n) => opts.onProgress?.({ phase: "decision", done: n, total: nMax }) },
      () => pairHits(pairs++, true),
      ([a, b]) => {
        kWith += +a;
        kWithout += +b;
        return +a - +b;
      },
    );
    i = o.n;
    const ending = { ...o, ci: o.verdict === "not-applied" || i === 0 ? ([-1, 1] as [number, number]) : o.ci };
    const result = record(
      ending,
      i,
      nMax,
      `re-send the recorded request with the item's blocks replaced by a placeholder, against the unchanged request (control call); betting confidence sequence on the paired differences (anytime-valid, alpha ${Number(alpha.toPrecision(3))})`,
    );
    if (opts.save !== false) appendTest(run.dir, redactor.value(result));
    return result;
  }
  const n = opts.n ?? 20;
  const plan = sequentialLooks(n, opts.nMax && opts.nMax > n ? opts.nMax : n);
  const z = zFor(plan.length * (opts.family ?? 1));
  for (const size of plan) {
    while (i < size) {
      const [a, b] = await pairHits(i, removed > 0);
      kWith += +a;
      kWithout += +b;
      i++;
      opts.onProgress?.({ phase: "decision", done: i, total: plan[plan.length - 1] });
    }
    ci = newcombe(kWith, i, kWithout, i, z);
    verdict = verdictFor(ci, removed > 0, minEffect);
    if (verdict !== "inconclusive" || (plan.length > 1 && i >= 2 * n && Math.abs((kWith - kWithout) / i) <= 0.05)) break;
  }
  const result = record(
    { n: i, verdict, ci, n_needed: newcombeNeeded(i, ci, verdict, minEffect) },
    plan.length,
    plan[plan.length - 1],
    "re-send the recorded request with the item's blocks replaced by a placeholder, against the unchanged request (control call); Newcombe 95% CI",
  );
  if (opts.save !== false) appendTest(run.dir, redactor.value(result));
  return result;
}
