/**
 * Checks and estimates made before a replay test spends anything.
 *
 *  - Refusals: a target that never happened in the recorded run and names a tool or agent the
 *    run never had (a typo, most likely) and a removal that matches nothing in the run cannot be
 *    what the user meant; answering "ruled out" or "not applied" for them would be recorded in the
 *    run's hash-chained tests.jsonl as if it were a finding. They raise {@link Refusal}, which
 *    lists what the run does have.
 *  - Cost: model calls and tokens per replayed program run, from the recording's own usage, and
 *    money only from a price table the user gives (no price is built in as fact).
 */
import type { RunModel } from "../graph/model";
import { targetHits } from "../graph/graph";
import { matchesPart, parseIntervention, parseTarget, removes, type ItemLike } from "../specs/grammar";

/** A request that cannot be meant for this run (the CLI exits 2). */
export class Refusal extends Error {
  constructor(message: string) {
    super(message);
    this.name = "Refusal";
  }
}

const list = (xs: string[]) => (xs.length ? xs.join(", ") : "none");

/** The run's tools and agents. */
export function runToolsAndAgents(m: RunModel): { tools: string[]; agents: string[] } {
  const tools = [...new Set(m.actions.map((a) => a.tool))].sort();
  // run.start, run.end and the task are the run's own events (agent "run"), not an agent's
  const own = (e: { type: unknown; kind?: unknown }) => String(e.type).startsWith("run.") || (e.type === "input" && e.kind === "task");
  const agents = [
    ...new Set(
      m.events
        .filter((e) => !own(e as { type: unknown; kind?: unknown }))
        .map((e) => (e as { agent?: unknown }).agent)
        .filter((a): a is string => typeof a === "string" && a !== ""),
    ),
  ].sort();
  return { tools, agents };
}

/** Every source an intervention can name, as specs: input:…, msg:…->…, result:…. */
export function runSources(m: RunModel): string[] {
  const out = new Set<string>();
  for (const e of m.events) {
    const ev = e as Record<string, unknown>;
    if (ev.type === "input" && ev.kind !== "task") out.add(`input:${String(ev.source)}`);
    else if (ev.type === "message") out.add(`msg:${String(ev.agent)}->${String(ev.to)}`);
  }
  for (const d of m.decisions) for (const c of d.context ?? []) if (c.kind === "result") out.add(`result:${c.source}`);
  return [...out];
}

/** Refuses a target that never happened and names a tool or agent this run never had. */
export function checkTarget(m: RunModel, spec: string): void {
  const t = parseTarget(spec);
  if (targetHits(m, spec).length) return;
  const { tools, agents } = runToolsAndAgents(m);
  const unknownTool = t.clauses.find((c) => c.key === "tool" && !tools.includes(c.value));
  const unknownAgent = t.clauses.find((c) => c.key === "agent" && !agents.includes(c.value));
  if (!unknownTool && !unknownAgent) return;
  const what = unknownTool ? `tool "${unknownTool.value}"` : `agent "${unknownAgent!.value}"`;
  throw new Refusal(
    `the target ${JSON.stringify(spec)} never happened in this run and names ${what}, which the run never had (tools: ${list(tools)}; agents: ${list(agents)}); nothing was tested or saved`,
  );
}

/** Refuses a removal that matches nothing any model call of the run saw, nor any input or message. */
export function checkRemoval(m: RunModel, spec: string): void {
  const iv = parseIntervention(spec);
  if (runItems(m).some((it) => removes([iv], it))) return;
  throw new Refusal(`the removal ${JSON.stringify(spec)} matches nothing in this run (its sources: ${list(runSources(m))}); nothing was tested or saved`);
}

/** Every item an intervention can name: decisions' context items, inputs and messages. */
function runItems(m: RunModel): ItemLike[] {
  const items: ItemLike[] = [];
  for (const d of m.decisions)
    for (const c of d.context ?? []) items.push({ kind: String(c.kind), source: String(c.source), trust: String(c.trust), ref: String(c.ref) });
  for (const e of m.events) {
    const ev = e as Record<string, unknown>;
    if (ev.type === "input")
      items.push({ kind: ev.kind === "task" ? "task" : "input", source: String(ev.source), trust: String(ev.trust), ref: String(ev.ref) });
    else if (ev.type === "message")
      items.push({ kind: "message", source: `${String(ev.agent)}->${String(ev.to)}`, trust: String(ev.trust ?? ""), ref: String(ev.ref) });
  }
  return items;
}

/**
 * Refuses a fix that would change nothing in this run, before anything runs: a removal or an edit
 * whose item matches nothing, or a redaction whose text none of the items it names holds (a
 * replay with it would only repeat the recording and report "not fixed").
 */
export function checkFix(m: RunModel, spec: string, what: "fix" | "edit" = "fix"): void {
  const iv = parseIntervention(spec);
  if (iv.guard) return; // guard:block changes how the replay guards calls, not the content
  if (!iv.edit) return checkRemoval(m, spec);
  const edit = iv.edit;
  const named = runItems(m).filter((it) => matchesPart(edit.item, it));
  if (!named.length)
    throw new Refusal(`the ${what} ${JSON.stringify(spec)} names no item of this run (its sources: ${list(runSources(m))}); nothing was tested or saved`);
  if (edit.kind !== "redact") return;
  const re = new RegExp(edit.re.source, edit.re.flags.replace(/[gy]/g, ""));
  const holds = named.some((it) => {
    const v = m.value(it.ref);
    return re.test(typeof v === "string" ? v : JSON.stringify(v ?? ""));
  });
  if (!holds) {
    const sources = [...new Set(named.map((it) => it.source))];
    throw new Refusal(
      `the ${what} ${JSON.stringify(spec)} redacts nothing: ${JSON.stringify(edit.pattern)} appears in none of the items it names (${list(sources.slice(0, 5))}${sources.length > 5 ? ", …" : ""}); nothing was tested or saved`,
    );
  }
}

/** Prices in US dollars per million tokens, per model name (the user's table). */
export type PriceTable = Record<string, { input: number; output: number }>;

/** Parses "MODEL=IN,OUT" (USD per million input and output tokens). */
export function parsePrice(spec: string): [string, { input: number; output: number }] {
  const m = /^(.+)=([0-9.]+),([0-9.]+)$/.exec(spec.trim());
  if (!m) throw new Refusal(`--price takes MODEL=IN,OUT (US dollars per million input and output tokens), got ${JSON.stringify(spec)}`);
  return [m[1], { input: Number(m[2]), output: Number(m[3]) }];
}

export interface CostEstimate {
  /** Model calls one replayed program run makes (as recorded). */
  calls_per_run: number;
  /** Recorded tokens per program run (input + output), where the recording has usage. */
  tokens_per_run: number;
  /** Per model: calls and tokens per run, and the price used (null: not in the table). */
  models: Record<string, { calls: number; input_tokens: number; output_tokens: number; usd_per_run: number | null }>;
  /** Money per program run; null when a model has no price (then money is not estimated). */
  usd_per_run: number | null;
  /** Upper bounds for a test of up to `pairs` pairs (two program runs a pair; sharing and caching only lower it). */
  max_pairs: number;
  max_model_calls: number;
  max_tokens: number;
  max_usd: number | null;
}

/**
 * Estimates what a test of up to `pairs` pairs costs, from the recording's usage and the user's
 * prices; `decisions`: the recorded calls one replay makes (default all; rung 1: the one re-sent).
 */
export function estimateCost(m: RunModel, pairs: number, prices: PriceTable = {}, decisions: RunModel["decisions"] = m.decisions): CostEstimate {
  const models: CostEstimate["models"] = {};
  for (const d of decisions) {
    const name = String(d.model);
    const row = (models[name] ??= { calls: 0, input_tokens: 0, output_tokens: 0, usd_per_run: null });
    row.calls++;
    const u = (d as { usage?: { input_tokens?: unknown; output_tokens?: unknown } }).usage;
    row.input_tokens += Number(u?.input_tokens) || 0;
    row.output_tokens += Number(u?.output_tokens) || 0;
  }
  let usd: number | null = 0;
  for (const [name, row] of Object.entries(models)) {
    const p = prices[name];
    row.usd_per_run = p ? (row.input_tokens * p.input + row.output_tokens * p.output) / 1e6 : null;
    usd = usd === null || row.usd_per_run === null ? null : usd + row.usd_per_run;
  }
  const calls = decisions.length;
  const tokens = Object.values(models).reduce((s, r) => s + r.input_tokens + r.output_tokens, 0);
  const runs = 2 * pairs;
  return {
    calls_per_run: calls,
    tokens_per_run: tokens,
    models,
    usd_per_run: usd,
    max_pairs: pairs,
    max_model_calls: runs * calls,
    max_tokens: runs * tokens,
    max_usd: usd === null ? null : runs * usd,
  };
}

/** The model-call budget a money budget allows, at the recording's mean price per call. */
export function callsForUsd(est: CostEstimate, usd: number): number {
  if (est.usd_per_run === null) {
    const missing = Object.entries(est.models)
      .filter(([, r]) => r.usd_per_run === null)
      .map(([k]) => k);
    throw new Refusal(`--budget-usd needs a price for ${missing.join(", ")} (--price MODEL=IN,OUT in US dollars per million tokens)`);
  }
  if (est.usd_per_run === 0 || est.calls_per_run === 0) return Number.MAX_SAFE_INTEGER;
  return Math.floor((usd / est.usd_per_run) * est.calls_per_run);
}
