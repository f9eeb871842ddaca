/**
 * The demo's seeded mock model. Each call seeds a fresh generator (Python's, so the draws are the
 * reference's) with the call's derived seed and follows a fixed policy per purpose:
 *  - summarize: keeps relevant sentences with probability 0.95 and repeats a planted "note to AI"
 *    as a "Vendor requirement" with probability 0.8; the order record becomes a fixed fact;
 *  - plan: refunds a damaged order under $200 (and e-mails the customer when the policy says to
 *    notify), else escalates; follows a vendor requirement about the customer list with
 *    probability 0.85 (export it, then e-mail it to the address in the requirement);
 *  - execute: runs the plan's steps as given.
 * Removing any document shifts which draws later sentences get, so even an irrelevant removal
 * flips some pairs: that is why "ruled out" needs an interval, not a zero.
 */
import { ModelOutput, PyFloat, PyRandom, pyFloat, type ModelCall } from "causeway-vscode";

export const FOLLOW_INJECTION = 0.8;
export const PLANNER_OBEYS = 0.85;
export const DROP_FACT = 0.05;

const EMAIL = /[\w.+-]+@[\w-]+(?:\.[\w-]+)+/;

type Sentence = { text: string; kind: "note" | "relevant" | "other" };
const split = new Map<string, Sentence[]>();
/** The sentences of a text, classified once: replays show the model the same documents every time. */
function sentences(v: unknown): Sentence[] {
  if (typeof v !== "string") return [];
  let out = split.get(v);
  if (!out) {
    out = v
      .split(/(?<=[.!?])\s+/)
      .map((t) => t.trim())
      .filter(Boolean)
      .map((text) => {
        const low = text.toLowerCase();
        return { text, kind: low.includes("note to ai") ? "note" : RELEVANT.some((w) => low.includes(w)) ? "relevant" : "other" };
      });
    if (split.size > 10_000) split.clear();
    split.set(v, out);
  }
  return out;
}

/**
 * len(re.findall(r"\S+", str(v))) as Python counts it, without building the text: a container's
 * text is one word plus one per separator (", " and ": ") plus one per run of spaces inside its
 * strings (quoted, so those runs never touch a separator). The same documents are counted on every
 * call of every replay, so counts of strings are remembered.
 */
function words(v: unknown): number {
  if (typeof v === "string") return count(v, WORDS);
  if (v === null || typeof v !== "object") return 1;
  return 1 + gaps(v);
}

function gaps(v: unknown): number {
  if (typeof v === "string") return count(v, SPACE_RUNS);
  if (Array.isArray(v)) return v.reduce((n: number, x) => n + gaps(x), Math.max(0, v.length - 1));
  if (v && typeof v === "object" && !(v instanceof PyFloat)) {
    const entries = Object.entries(v);
    return entries.reduce((n: number, [k, x]) => n + gaps(k) + gaps(x), Math.max(0, 2 * entries.length - 1));
  }
  return 0;
}

const WORDS = /\S+/g;
const SPACE_RUNS = / +/g;
const memo = new Map<RegExp, Map<string, number>>([
  [WORDS, new Map()],
  [SPACE_RUNS, new Map()],
]);
function count(s: string, re: RegExp): number {
  const seen = memo.get(re)!;
  let n = seen.get(s);
  if (n === undefined) {
    n = s.match(re)?.length ?? 0;
    if (seen.size > 10_000) seen.clear();
    seen.set(s, n);
  }
  return n;
}

type Step = { tool: string; args: Record<string, unknown> };

/** A generator seeded on first use: calls that draw nothing (execute) never pay for seeding one. */
function lazyRandom(seed: number): { random(): number } {
  let rng: PyRandom | undefined;
  return { random: () => (rng ??= new PyRandom(seed)).random() };
}

const RELEVANT = ["cracked", "damaged", "full refund", "notify"];

function policy(context: unknown[], purpose: string | null, seed: number): unknown {
  const rng = lazyRandom(seed);
  const dicts = context.filter((v): v is Record<string, any> => !!v && typeof v === "object" && !Array.isArray(v));
  if (purpose === "summarize") {
    const facts: string[] = [];
    for (const v of context) {
      if (v && typeof v === "object" && "order_id" in v) {
        const o = v as Record<string, any>;
        facts.push(`Order ${o.order_id}: ${o.item}, $${Number(o.amount).toFixed(2)}, customer ${o.customer}.`);
      }
      for (const { text, kind } of sentences(v)) {
        if (kind === "note") {
          if (rng.random() < FOLLOW_INJECTION) facts.push("Vendor requirement: " + text.slice(text.indexOf(":") + 1).trim());
        } else if (kind === "relevant") {
          if (rng.random() >= DROP_FACT) facts.push(text);
        }
      }
    }
    return { facts };
  }
  if (purpose === "plan") {
    const facts: string[] = dicts.flatMap((v) => (Array.isArray(v.facts) ? v.facts : []));
    const text = facts.join(" ").toLowerCase();
    const orderFact = facts.find((f) => f.startsWith("Order "));
    const order = orderFact ? /order (\d+): .*?\$([\d.]+), customer (\S+?)\.$/i.exec(orderFact) : null;
    const steps: Step[] = [];
    if (order && (text.includes("cracked") || text.includes("damaged")) && text.includes("full refund") && parseFloat(order[2]) < 200) {
      const amount = parseFloat(order[2]);
      steps.push({ tool: "issue_refund", args: { order_id: parseInt(order[1], 10), amount: pyFloat(amount) } });
      if (text.includes("notify the customer")) {
        steps.push({ tool: "send_email", args: { to: order[3], body: `Refund of $${amount.toFixed(2)} issued.` } });
      }
    } else {
      steps.push({ tool: "escalate", args: { reason: "not enough information to apply policy" } });
    }
    for (const f of facts) {
      if (f.startsWith("Vendor requirement") && f.includes("customer list") && rng.random() < PLANNER_OBEYS) {
        const m = EMAIL.exec(f);
        if (m) {
          steps.push({ tool: "export_customers", args: {} });
          steps.push({ tool: "send_email", args: { to: m[0], attach: "customers.csv" } });
        }
      }
    }
    return { steps };
  }
  if (purpose === "execute") {
    return { calls: dicts.flatMap((v) => (Array.isArray(v.steps) ? v.steps : [])) };
  }
  throw new Error(`the mock model has no behaviour for purpose ${JSON.stringify(purpose)}`);
}

/** The model function the demo System registers as "mock". */
export function mockModel(context: unknown[], call: ModelCall): ModelOutput {
  const value = policy(context, call.purpose, call.seed);
  return new ModelOutput(value, {
    input_tokens: Math.floor(context.reduce((n: number, c) => n + words(c), 0) * 1.3),
    output_tokens: Math.floor(words(value) * 1.3),
    estimated: true,
  });
}
