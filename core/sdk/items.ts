/**
 * What an SDK run hands around: the items an agent puts in a model call's context, a model's
 * answer, and what model and tool functions are told about a call.
 */
import { refOf } from "../log/hash";
import type { ContextRecord, Trust, Usage } from "../log/events";

/** A model's answer with its token usage. Return it from a model function to record tokens. */
export class ModelOutput {
  /** Marks model outputs across copies of the SDK. */
  readonly isModelOutput = true;
  constructor(
    readonly value: unknown,
    readonly usage?: Partial<Usage>,
    /**
     * The wire request the model function sent, as the SDK adapters record it ({api, path, body,
     * blocks}: each block a path in the body and the index of the context item it holds), so the
     * run can be replayed without its program. Recorded with the decision, never sent anywhere.
     */
    readonly request?: { api: string; path: string; body: unknown; blocks: unknown[] },
  ) {}
}

/** What a model function is told about the call. */
export interface ModelCall {
  agent: string;
  model: string;
  /** The `purpose` given to `decide` ("" when none was given). */
  purpose: string;
  /** Derived from the run seed, the agent and how many calls it made before: deriveSeed(runSeed, agent, k). */
  seed: number;
  params: Record<string, unknown>;
  /** The context items (after any intervention), with their labels. */
  items: readonly Item[];
}

/** fn(contextValues, call) → output value, or a ModelOutput, or a promise of either. */
export type ModelFn = (context: unknown[], call: ModelCall) => unknown;

export interface ToolCall {
  agent: string;
  tool: string;
  runId: string;
}
/** fn(args, call) → result, or a promise of it. Throwing records {"error": message}. */
export type ToolFn = (args: any, call: ToolCall) => unknown;

/** A recorded piece of content an agent can put in a model call's context. */
export class Item {
  private _ref: string | undefined;
  constructor(
    readonly value: unknown,
    ref: string | undefined,
    /** "task" | "input" | "result" | "message" | "output" | "literal" */
    readonly kind: string,
    readonly source: string,
    readonly trust: Trust,
    /** Id of the event that recorded it. */
    readonly fromEvent: string | null,
    /** Id of the decision that produced it (outputs, and messages sent from outputs). */
    readonly decision: string | null = null,
  ) {
    this._ref = ref || undefined;
  }

  /** The content ref: sha256 of the canonical value (computed when first needed, so replays that keep nothing hash only what they use). */
  get ref(): string {
    return (this._ref ??= refOf(this.value));
  }

  record(): ContextRecord {
    return { from_event: this.fromEvent, kind: this.kind, ref: this.ref, source: this.source, trust: this.trust };
  }
}

export class ModelError extends Error {
  constructor(
    readonly agent: string,
    readonly model: string,
    cause: unknown,
  ) {
    super(`model "${model}" failed for agent ${agent}: ${cause instanceof Error ? cause.message : String(cause)}`);
    this.name = "ModelError";
  }
}

/** Items from another copy of the SDK (a program loaded from source) are accepted by shape. */
export function isItemLike(x: unknown): boolean {
  return (
    !!x && typeof x === "object" && typeof (x as Item).ref === "string" && typeof (x as Item).kind === "string" && typeof (x as Item).record === "function"
  );
}
/** A ModelOutput from another copy of the SDK, by shape. */
export function isModelOutputLike(x: unknown): boolean {
  return !!x && typeof x === "object" && (x as ModelOutput).isModelOutput === true && "value" in x;
}
