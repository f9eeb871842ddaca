/**
 * A read run with the lookups analysis needs: events by id and type, blob values, the run.start
 * declarations. Built once per read; everything else derives from it.
 */
import type { ActionEvent, DecisionEvent, InputEvent, LoadedEvent, MessageEvent, RunStartEvent } from "../log/events";
import type { RunData } from "../log/reader";
import { parseLossless } from "../log/pyjson";

export class RunModel {
  readonly byId = new Map<string, LoadedEvent>();
  readonly start: Partial<RunStartEvent>;
  readonly inputs: (InputEvent & { line: number })[] = [];
  readonly decisions: (DecisionEvent & { line: number })[] = [];
  readonly actions: (ActionEvent & { line: number })[] = [];
  readonly messages: (MessageEvent & { line: number })[] = [];

  constructor(readonly run: RunData) {
    for (const e of run.events) {
      if (typeof e.id === "string" && !this.byId.has(e.id)) this.byId.set(e.id, e);
      // typed by `type`: the reader reports any required field missing or mistyped (events.ts
      // REQUIRED) as a problem, and the run then fails verify; fields are still read defensively
      switch (e.type) {
        case "input":
          this.inputs.push(e as unknown as InputEvent & { line: number });
          break;
        case "decision":
          this.decisions.push(e as unknown as DecisionEvent & { line: number });
          break;
        case "action":
          this.actions.push(e as unknown as ActionEvent & { line: number });
          break;
        case "message":
          this.messages.push(e as unknown as MessageEvent & { line: number });
          break;
      }
    }
    this.start = (run.events.find((e) => e.type === "run.start") as RunStartEvent | undefined) ?? {};
  }

  get runId(): string {
    return this.run.runId;
  }
  get events(): LoadedEvent[] {
    return this.run.events;
  }

  /** A blob's value, or undefined when missing, damaged or too large. */
  value(ref: unknown): unknown {
    return typeof ref === "string" ? this.run.blobs.value(ref) : undefined;
  }

  /** Canonical JSON text of a blob's value ("" when it can't be had). */
  canonical(ref: unknown): string {
    return (typeof ref === "string" ? this.run.blobs.canonicalOf(ref) : undefined) ?? "";
  }

  /** A blob's value with Python's float forms kept (89.0 stays a float): for re-serialising it exactly. */
  lossless(ref: unknown): unknown {
    if (typeof ref !== "string") return undefined;
    const r = this.run.blobs.get(ref);
    if (!r.ok) return undefined;
    if (r.exact) return r.value; // no float form to keep: the parsed value is already exact
    const c = r.canonical;
    if (!c) return undefined;
    try {
      return parseLossless(c);
    } catch {
      return undefined;
    }
  }

  /** Why a blob can't be read, or undefined when it can. */
  blobProblem(ref: unknown): string | undefined {
    if (typeof ref !== "string") return "no ref";
    const r = this.run.blobs.get(ref);
    return r.ok ? undefined : r.message;
  }

  task(): unknown {
    const t = this.inputs.find((e) => e.kind === "task");
    return t ? this.value(t.ref) : undefined;
  }

  sensitiveDeclared(): boolean {
    return Array.isArray(this.start.sensitive_tools) && this.start.sensitive_tools.length > 0;
  }
}
