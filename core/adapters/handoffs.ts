/**
 * Handoffs between agents, for the recorders that see only model calls (the preload, the gateway).
 * Does a prompt carry an earlier agent's words? Programs hand one agent's output to the next in
 * many shapes: the output alone, wrapped in text (`"Brief from the researcher:\n" + brief`), or
 * cut and joined with other text. A block that is exactly an output is a message (the preload's
 * exact match); this finds the other two, with the evidence each rests on:
 * - `substring`: the output appears verbatim inside the block (at least MIN_CHARS of it);
 * - `inferred`: the block and the output share a run of at least MIN_WORDS words in order (the
 *   output was trimmed or reflowed), which is weaker evidence and is recorded as such.
 * Pure and linear in the texts' lengths: prompts and outputs are untrusted, possibly large text.
 */
import { Item } from "../sdk/items";
import type { Agent } from "../sdk/runtime";

/** Shortest output that counts as carried verbatim (shorter ones, "OK", "Done.", are everywhere). */
export const MIN_CHARS = 24;
/** Shortest shared run of words that counts as carried. */
export const MIN_WORDS = 12;

export type CarriedGrade = "substring" | "inferred";

export interface Carried<T> {
  of: T;
  grade: CarriedGrade;
  /** Characters of the output found verbatim (substring), or words shared in a run (inferred). */
  size: number;
}

const words = (text: string): string[] => text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];

/** The longest run of consecutive words the two share, capped at what the caller needs to know. */
function sharedRun(block: readonly string[], output: readonly string[]): number {
  if (output.length < MIN_WORDS || block.length < MIN_WORDS) return 0;
  // every MIN_WORDS-gram of the block, then the longest chain of matching grams in the output
  const grams = new Set<string>();
  for (let i = 0; i + MIN_WORDS <= block.length; i++) grams.add(block.slice(i, i + MIN_WORDS).join(" "));
  let best = 0;
  let run = 0;
  for (let i = 0; i + MIN_WORDS <= output.length; i++) {
    run = grams.has(output.slice(i, i + MIN_WORDS).join(" ")) ? run + 1 : 0;
    if (run) best = Math.max(best, run + MIN_WORDS - 1);
  }
  return best;
}

/**
 * The earlier output this block carries, best evidence first (verbatim before inferred, then the
 * longest), or undefined. `texts` are the candidates' texts with what each stands for.
 */
export function findCarried<T>(block: string, texts: Iterable<{ text: string; of: T }>): Carried<T> | undefined {
  let best: Carried<T> | undefined;
  let blockWords: string[] | undefined;
  for (const { text, of } of texts) {
    if (text === block || text.length < MIN_CHARS) continue;
    if (block.includes(text.trim()) && text.trim().length >= MIN_CHARS) {
      const size = text.trim().length;
      if (!best || best.grade === "inferred" || size > best.size) best = { of, grade: "substring", size };
      continue;
    }
    if (best?.grade === "substring") continue;
    blockWords ??= words(block);
    const run = sharedRun(blockWords, words(text));
    if (run >= MIN_WORDS && (!best || run > best.size)) best = { of, grade: "inferred", size: run };
  }
  return best;
}

/**
 * What a message carrying an output inside other text holds: the prompt's own content, with the
 * trust and the deciding event of the output it carries (so the graph joins the two agents).
 */
export function carriedContent(from: Agent, output: Item, value: string): Item {
  return new Item(value, from.rt.refFor(value), "output", output.source, output.trust, output.fromEvent, output.decision);
}

/**
 * One run's agent outputs, so that a later agent's prompt made of one (exactly, or carrying it
 * inside other text) is recorded as a message from that agent; a ConversationRecorder's `link`.
 */
export class Handoffs {
  private readonly outputs = new Map<string, { agent: Agent; item: Item }>();
  private readonly messages = new Map<string, Item>();

  /** Notes an agent's output text (the first agent to say a text keeps it). */
  note(text: string | undefined, agent: Agent, item: Item): void {
    if (text && !this.outputs.has(text)) this.outputs.set(text, { agent, item });
  }

  /** The message a prompt block stands for, or undefined (then it is the agent's own input). */
  link(value: unknown, agent: Agent): Item | undefined {
    if (typeof value !== "string" || !value) return undefined;
    const exact = this.outputs.get(value);
    if (exact) return exact.agent === agent ? undefined : this.send(exact.agent, exact.item, agent.name, value);
    const c = findCarried(
      value,
      [...this.outputs].filter(([, o]) => o.agent !== agent).map(([text, of]) => ({ text, of })),
    );
    return c ? this.send(c.of.agent, c.of.item, agent.name, value, c) : undefined;
  }

  private send(from: Agent, output: Item, to: string, value: string, c?: Carried<unknown>): Item {
    const key = `${from.name}\u0000${to}\u0000${output.fromEvent}\u0000${c ? value : ""}`;
    let msg = this.messages.get(key);
    if (!msg) {
      msg = c ? from.send(to, carriedContent(from, output, value), { carried: { grade: c.grade, size: c.size } }) : from.send(to, output);
      this.messages.set(key, msg);
    }
    return msg;
  }
}
