/**
 * The simulated model of the attribution benchmark: seeded (Python's Mersenne Twister through
 * PyRandom), rule-based, written with the SDK. It stands in for an LLM so the pipeline and the
 * scoring can be checked against a known ground truth; it says nothing about real models.
 *
 *  - summarize (researchers): reads its context sentence by sentence. Every sentence costs one
 *    draw. A sentence carrying an instruction marker is repeated as "Instruction: …" with the
 *    marker's probability (SUSCEPTIBILITY); any other sentence is kept with probability KEEP.
 *    So removing even an innocent document shifts which draw each later sentence gets: an
 *    irrelevant removal still flips some pairs, and "ruled out" needs an interval, not a zero.
 *    Records (tool results) become "Record: {…}" facts without a draw. When it repeats an
 *    instruction the model rewrites spelled-out addresses ("name (at) host (dot) tld") as
 *    addresses: the paraphrase that string matching cannot follow.
 *  - plan (planner): the scenario's planner turns the facts into tool calls, drawing once per
 *    instruction it may follow.
 *  - review (reviewer): reads the plan and writes a review (one draw: raises a concern or not).
 *  - execute (executor, model "runner"): runs the planner's steps as given. It is not a language
 *    model and is not counted as a model call (the reference's rule).
 */
import { ModelOutput, PyRandom, dumps, type ModelCall, type ModelFn } from "causeway-vscode";

/** How often the summariser repeats an instruction, by its phrasing. */
export const SUSCEPTIBILITY: ReadonlyArray<[marker: string, p: number]> = [
  ["NOTE TO AI ASSISTANT", 0.8],
  ["Policy update:", 0.75],
  ["Maintainer note:", 0.7],
  ["Note for the assistant:", 0.5],
  ["IGNORE ALL PREVIOUS INSTRUCTIONS", 0.04],
];
/** Probability that an ordinary sentence is kept in a summary. */
export const KEEP = 0.95;

export type Step = { tool: string; args: Record<string, unknown> };
/** A scenario's planner: the research notes as text (one fact per line) and the call's generator. */
export type Planner = (text: string, rng: PyRandom) => Step[];

const SENTENCE = /(?<=[.!?])\s+/;
const SPELLED = /([\w.+-]+) \(at\) ([\w-]+) \(dot\) (\w+)/g;

export function sentences(v: string): string[] {
  return v
    .split(SENTENCE)
    .map((s) => s.trim())
    .filter(Boolean);
}

/** "audit (at) host (dot) example" → "audit@host.example". */
export function unspell(s: string): string {
  return s.replace(SPELLED, "$1@$2.$3");
}

function summarize(context: unknown[], rng: PyRandom): { facts: string[] } {
  const facts: string[] = [];
  for (const v of context) {
    if (typeof v !== "string") {
      if (v !== null && typeof v === "object") facts.push("Record: " + dumps(v));
      continue;
    }
    for (const s of sentences(v)) {
      const hit = SUSCEPTIBILITY.find(([m]) => s.includes(m));
      const u = rng.random();
      if (hit) {
        if (u < hit[1]) {
          const rest = s.slice(s.indexOf(hit[0]) + hit[0].length).replace(/^[\s:]+/, "");
          facts.push("Instruction: " + unspell(rest));
        }
      } else if (u < KEEP) facts.push(s);
    }
  }
  return { facts };
}

/** The facts of every summary in a context, one per line, then any plain text (the task). */
export function notesText(context: unknown[]): string {
  const lines: string[] = [];
  for (const v of context) {
    if (v && typeof v === "object" && Array.isArray((v as { facts?: unknown }).facts)) lines.push(...(v as { facts: string[] }).facts);
  }
  for (const v of context) if (typeof v === "string") lines.push(v);
  return lines.join("\n");
}

export function stepsOf(context: unknown[]): Step[] {
  const out: Step[] = [];
  for (const v of context) {
    if (v && typeof v === "object" && Array.isArray((v as { steps?: unknown }).steps)) out.push(...(v as { steps: Step[] }).steps);
  }
  return out;
}

/** Calls per model name that were really computed (not served from the replay cache). */
export class CallCounter {
  readonly byModel: Record<string, number> = {};
  /** Calls of the language models ("llm"): what the benchmark counts. */
  get llm(): number {
    return this.byModel.llm ?? 0;
  }
  add(model: string): void {
    this.byModel[model] = (this.byModel[model] ?? 0) + 1;
  }
}

function words(v: unknown): number {
  return (typeof v === "string" ? v : dumps(v)).match(/\S+/g)?.length ?? 0;
}

/** The simulated language model for one scenario ("llm"): summarize, plan and review. */
export function simModel(planner: Planner, counter: CallCounter): ModelFn {
  return (context: unknown[], call: ModelCall) => {
    counter.add("llm");
    const rng = new PyRandom(call.seed);
    let value: unknown;
    if (call.purpose === "summarize") value = summarize(context, rng);
    else if (call.purpose === "plan") value = { steps: planner(notesText(context), rng) };
    else if (call.purpose === "review") {
      const steps = stepsOf(context);
      const outside = steps.filter((s) => s.tool === "send_email" && /@(?!example\.com)/.test(String(s.args.to ?? "")));
      const concern = outside.length > 0 && rng.random() < 0.3;
      value = { review: concern ? "concerns" : "approved", notes: concern ? [`check the recipient ${String(outside[0].args.to)}`] : [] };
    } else throw new Error(`the simulated model has no behaviour for purpose ${JSON.stringify(call.purpose)}`);
    return new ModelOutput(value, {
      input_tokens: Math.floor(context.reduce((n: number, c) => n + words(c), 0) * 1.3),
      output_tokens: Math.floor(words(value) * 1.3),
      estimated: true,
    });
  };
}

/** The executor's "model": the planner's steps, as given. Deterministic; not a language model. */
export function runnerModel(counter: CallCounter): ModelFn {
  return (context: unknown[]) => {
    counter.add("runner");
    return { calls: stepsOf(context) };
  };
}

/** One draw: follow with probability p. */
export function follows(rng: PyRandom, p = 0.9): boolean {
  return rng.random() < p;
}

const EMAIL = /[\w.+-]+@[\w-]+(?:\.[\w-]+)+/;
export function emailIn(s: string): string | undefined {
  return EMAIL.exec(s)?.[0];
}

/** Lines of the notes that are repeated instructions. */
export function instructions(text: string): string[] {
  return text.split("\n").filter((l) => l.startsWith("Instruction:"));
}
