/**
 * The preload's conversations and the links between them: one recorder per agent, and the
 * content seen so far (decision outputs, tool results), so that a prompt made of another agent's
 * output reads as a message from that agent and a fetched document pasted into a prompt stays
 * that document.
 */
import { ConversationRecorder } from "../adapters/shared";
import { carriedContent, findCarried } from "../adapters/handoffs";
import type { Agent, Runtime } from "../sdk/runtime";
import type { Item } from "../sdk/items";

export class Links {
  private readonly recorders = new Map<string, ConversationRecorder>();
  /** Text of decision outputs and tool results → the item (to link prompts built from them). */
  private readonly texts = new Map<string, { agent: Agent; item: Item; output: boolean }>();
  private readonly messages = new Map<string, Item>();

  constructor(private readonly rt: Runtime) {}

  /** The agents' recorders, in the order they were made. */
  all(): IterableIterator<ConversationRecorder> {
    return this.recorders.values();
  }

  recorderFor(name: string): ConversationRecorder {
    let r = this.recorders.get(name);
    if (!r) {
      r = new ConversationRecorder(this.rt.agent(name), { link: (v, a) => this.link(v, a), linkCall: (id, part, a) => this.linkCall(id, part, a) });
      this.recorders.set(name, r);
    }
    return r;
  }

  /** Some agent's recorder holds a result for this tool call. */
  answered(id: string): boolean {
    for (const r of this.recorders.values()) if (r.hasResult(id)) return true;
    return false;
  }

  /** A prompt block made of content seen before: another agent's output (a message) or a fetched document. */
  link(value: unknown, agent: Agent): Item | undefined {
    if (typeof value !== "string" || !value) return undefined;
    const hit = this.texts.get(value);
    if (!hit) return this.carriedMessage(value, agent);
    if (!hit.output) return hit.item;
    return hit.agent === agent ? undefined : this.messageFor(hit.agent, hit.item, agent.name);
  }

  /**
   * A prompt that carries another agent's output inside other text (`"Brief:\n" + brief`, or
   * trimmed): a message from that agent holding the prompt's own content, with the trust of the
   * output it carries and the evidence (`carried: {grade, size}`), recorded once.
   */
  private carriedMessage(value: string, agent: Agent): Item | undefined {
    const outputs = [...this.texts].filter(([, h]) => h.output && h.agent !== agent).map(([text, h]) => ({ text, of: h }));
    const c = findCarried(value, outputs);
    if (!c) return undefined;
    const { agent: from, item } = c.of;
    const key = `${from.name}\u0000${agent.name}\u0000${item.fromEvent}\u0000${value}`;
    let msg = this.messages.get(key);
    if (!msg) {
      msg = from.send(agent.name, carriedContent(from, item, value), { carried: { grade: c.grade, size: c.size } });
      this.messages.set(key, msg);
    }
    return msg;
  }

  /**
   * A tool call of another agent's conversation in this agent's request (a handed-over history):
   * its result is the same item (a fetched document stays that document), the decision that asked
   * for it reaches this agent as a message from that agent.
   */
  private linkCall(id: string, part: "result" | "decision", agent: Agent): Item | undefined {
    for (const r of this.recorders.values()) {
      if (r.agent === agent) continue;
      if (part === "result") {
        const item = r.resultOf(id);
        if (item) return item;
      } else {
        const d = r.decisionOf(id);
        if (d) return this.messageFor(r.agent, d, agent.name);
      }
    }
    return undefined;
  }

  /** The message carrying one decision's output from one agent to another (recorded once). */
  messageFor(from: Agent, output: Item, to: string): Item {
    const key = `${from.name}\u0000${to}\u0000${output.fromEvent}`;
    let msg = this.messages.get(key);
    if (!msg) {
      msg = from.send(to, output);
      this.messages.set(key, msg);
    }
    return msg;
  }

  /** The agent output this text is, if any. */
  outputOf(text: string): { agent: Agent; item: Item } | undefined {
    const hit = this.texts.get(text);
    return hit?.output ? hit : undefined;
  }

  /** Notes content an agent produced, so that a prompt made of it reads as a message from that agent. */
  noteOutput(text: string, agent: Agent, item: Item): void {
    if (text && !this.texts.has(text)) this.texts.set(text, { agent, item, output: true });
  }

  /** Notes a decision's text (its answer), whatever the agent it came from. */
  noteDecision(text: string, agent: Agent, item: Item): void {
    this.texts.set(text, { agent, item, output: true });
  }

  /** Notes a tool result's texts: a prompt that pastes one is that result. */
  noteResult(texts: readonly string[], agent: Agent, item: Item): void {
    for (const t of texts) if (!this.texts.has(t)) this.texts.set(t, { agent, item, output: false });
  }
}
