/**
 * Options of the real-model benchmark (`npm run bench -- --endpoint URL --model NAME …`) and its
 * cost estimate. Every bad value is refused with a {@link UsageError} before any call is made.
 */
import { SCENARIOS, type Scenario } from "./scenarios";
import { llmCallsPerRun } from "./system";
import { apiFromUrl, type Api, type Price } from "./real-client";
import { plannerTools, PROMPTS, toolSpecs } from "./real-agents";

export class UsageError extends Error {
  constructor(
    message: string,
    readonly code: string = "usage",
  ) {
    super(message);
    this.name = "UsageError";
  }
}

export interface RealOptions {
  endpoint: string;
  api: Api;
  model: string;
  apiKeyEnv: string;
  runs: number;
  /** Runs per arm of the ground-truth check. */
  truthN: number;
  n: number;
  nMax: number;
  maxCalls?: number;
  maxUsd?: number;
  price?: Price;
  workers: number;
  yes: boolean;
  json: boolean;
  out: string;
  scenarios: Scenario[];
  method: "betting" | "newcombe";
  /** How replays re-run the agents: agentless re-simulation from the recorded requests (the default), or the program. */
  replay: "program" | "agentless";
  temperature?: number;
  timeoutMs: number;
  keepRuns: string;
}

const positiveInt = (flag: string, v: string): number => {
  const x = Number(v);
  if (!Number.isInteger(x) || x < 1) throw new UsageError(`${flag} must be a positive integer (got ${JSON.stringify(v)})`);
  return x;
};

const positiveNum = (flag: string, v: string): number => {
  const x = Number(v);
  if (!Number.isFinite(x) || x <= 0) throw new UsageError(`${flag} must be a positive number (got ${JSON.stringify(v)})`);
  return x;
};

/** "--price MODEL=IN,OUT": dollars per million input and output tokens of MODEL. */
export function parsePrice(v: string): { model: string; price: Price } {
  const m = /^(.+)=([0-9.]+),([0-9.]+)$/.exec(v);
  if (!m || !Number.isFinite(Number(m[2])) || !Number.isFinite(Number(m[3])))
    throw new UsageError(`--price must be MODEL=IN,OUT in dollars per million tokens (got ${JSON.stringify(v)})`);
  return { model: m[1], price: { input: Number(m[2]), output: Number(m[3]) } };
}

export function parseRealArgs(argv0: string[], env: NodeJS.ProcessEnv = process.env): RealOptions & { apiKey?: string } {
  const argv = argv0.flatMap((a) => (/^--[\w-]+=/.test(a) ? [a.slice(0, a.indexOf("=")), a.slice(a.indexOf("=") + 1)] : [a]));
  const o: Partial<RealOptions> & { api?: Api; prices: { model: string; price: Price }[]; names: string[] } = {
    runs: 10,
    truthN: 10,
    n: 10,
    nMax: 30,
    workers: 1,
    yes: false,
    json: false,
    out: "bench/results",
    method: "betting",
    replay: "agentless",
    timeoutMs: 120_000,
    keepRuns: "",
    apiKeyEnv: "",
    prices: [],
    names: [],
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const val = () => {
      const v = argv[++i];
      if (v === undefined || v.startsWith("--")) throw new UsageError(`${a} needs a value`);
      return v;
    };
    if (a === "--endpoint") o.endpoint = val();
    else if (a === "--model") o.model = val();
    else if (a === "--api") {
      const v = val();
      if (v !== "openai" && v !== "anthropic") throw new UsageError(`--api must be openai or anthropic (got ${JSON.stringify(v)})`);
      o.api = v;
    } else if (a === "--api-key-env") o.apiKeyEnv = val();
    else if (a === "--runs") o.runs = positiveInt(a, val());
    else if (a === "--truth-n") o.truthN = positiveInt(a, val());
    else if (a === "--n") o.n = positiveInt(a, val());
    else if (a === "--n-max") o.nMax = positiveInt(a, val());
    else if (a === "--max-calls") o.maxCalls = positiveInt(a, val());
    else if (a === "--max-usd") o.maxUsd = positiveNum(a, val());
    else if (a === "--price") o.prices.push(parsePrice(val()));
    else if (a === "--workers") o.workers = positiveInt(a, val());
    else if (a === "--temperature") {
      const t = Number(val());
      if (!Number.isFinite(t) || t < 0 || t > 2) throw new UsageError("--temperature must be between 0 and 2");
      o.temperature = t;
    } else if (a === "--timeout-s") o.timeoutMs = positiveNum(a, val()) * 1000;
    else if (a === "--scenario") o.names.push(val());
    else if (a === "--method") {
      const m = val();
      if (m !== "betting" && m !== "newcombe") throw new UsageError("--method must be betting or newcombe");
      o.method = m;
    } else if (a === "--replay") {
      const m = val();
      if (m !== "program" && m !== "agentless") throw new UsageError("--replay must be program or agentless");
      o.replay = m;
    } else if (a === "--out") o.out = val();
    else if (a === "--keep-runs") o.keepRuns = val();
    else if (a === "--yes" || a === "-y") o.yes = true;
    else if (a === "--json") o.json = true;
    else throw new UsageError(`unknown option ${a}`);
  }
  if (!o.endpoint) throw new UsageError("--endpoint needs a URL");
  let url: URL;
  try {
    url = new URL(o.endpoint);
  } catch {
    throw new UsageError("--endpoint is not a URL");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new UsageError("--endpoint must be an http or https URL");
  if (!o.model) throw new UsageError("--model needs the model's name, as the endpoint knows it");
  let apiKey: string | undefined;
  if (o.apiKeyEnv) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(o.apiKeyEnv)) throw new UsageError("--api-key-env takes the name of an environment variable");
    apiKey = env[o.apiKeyEnv];
    if (!apiKey) throw new UsageError(`the environment variable ${o.apiKeyEnv} (--api-key-env) is not set`);
  }
  const price = o.prices.find((p) => p.model === o.model)?.price;
  if (o.prices.length && !price) throw new UsageError(`--price names ${o.prices.map((p) => p.model).join(", ")}, not the model ${o.model}`);
  if (o.maxUsd !== undefined && !price)
    throw new UsageError("--max-usd needs the model's price: --price MODEL=IN,OUT (dollars per million input and output tokens)");
  const scenarios = o.names.length
    ? o.names.map(
        (n) =>
          SCENARIOS.find((s) => s.name === n) ??
          (() => {
            throw new UsageError(`no scenario ${JSON.stringify(n)} (have: ${SCENARIOS.map((s) => s.name).join(", ")})`);
          })(),
      )
    : [...SCENARIOS];
  const { prices, names, ...rest } = o;
  void prices;
  void names;
  return { ...(rest as RealOptions), api: o.api ?? apiFromUrl(o.endpoint), price, scenarios: [...new Set(scenarios)], apiKey };
}

export interface Estimate {
  /** Model calls: recording, the ground-truth check, and attributions (expected and at most). */
  calls: { record: number; ground_truth: number; attribution_expected: number; attribution_max: number; expected: number; max: number };
  tokens: { per_call_input: number; per_call_output: number; expected: number };
  usd: { expected: number; max: number } | null;
  assumptions: string[];
}

/**
 * What a run will cost before it starts. Recording and the ground-truth check are fixed; an
 * attribution is bounded by n_max pairs for each test (the shared arm plus one arm per test, the
 * tests being the group and each input), and expected at a third of that, the reference's
 * 320–540 calls at n_max 30 with 3–4 inputs.
 */
export function estimate(o: RealOptions): Estimate {
  let record = 0;
  let truth = 0;
  let attrMax = 0;
  let attrBase = 0;
  // without the program an agent that asks for tools gets their results and is called again, up to
  // its recorded calls + 2: an arm makes at most three times the recorded calls
  const armFactor = o.replay === "agentless" ? 3 : 1;
  let inChars = 0;
  let callsForChars = 0;
  for (const sc of o.scenarios) {
    const per = llmCallsPerRun(sc);
    record += o.runs * per;
    if (sc.target) truth += (o.truthN + Math.max(0, o.truthN - o.runs)) * per;
    const inputs = Object.values(sc.researchers).reduce((k, d) => k + d.length, 0) + (sc.extraSuspects?.length ?? 0);
    if (sc.target) attrBase += o.runs * o.nMax * (2 + inputs) * per;
    if (sc.target) attrMax += o.runs * o.nMax * (2 + inputs) * per * armFactor;
    const docs = Object.values(sc.researchers)
      .flat()
      .reduce((k, d) => k + d.text.length + d.source.length + 20, 0);
    inChars += PROMPTS.summarize.length + PROMPTS.plan.length + docs * 1.5 + JSON.stringify(toolSpecs(plannerTools(sc))).length + sc.task.length * 2;
    callsForChars += 2;
  }
  const attrExpected = Math.round(attrBase / 3);
  const perIn = Math.ceil(inChars / Math.max(1, callsForChars) / 4);
  const perOut = 200;
  const expected = record + truth + attrExpected;
  const max = record + truth + attrMax;
  const cost = (calls: number) => (o.price ? Math.round(((calls * perIn * o.price.input + calls * perOut * o.price.output) / 1e6) * 100) / 100 : 0);
  return {
    calls: { record, ground_truth: truth, attribution_expected: attrExpected, attribution_max: attrMax, expected, max },
    tokens: { per_call_input: perIn, per_call_output: perOut, expected: expected * (perIn + perOut) },
    usd: o.price ? { expected: cost(expected), max: cost(max) } : null,
    assumptions: [
      "every recorded run is harmful (the most attributions there can be)",
      `an attribution runs at most n_max (${o.nMax}) pairs per test, the tests being the group and each input; expected: a third of that`,
      ...(armFactor > 1
        ? [
            "replayed without the program, an arm re-sends each agent's calls and may call an agent that asked for tools again, up to its recorded calls + 2 (the most: three times the recorded calls); expected: as many as recorded",
          ]
        : []),
      `tokens: about ${perIn} in and ${perOut} out per call (characters / 4)`,
    ],
  };
}
