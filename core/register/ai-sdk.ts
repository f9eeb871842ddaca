/**
 * The AI SDK (`ai` 5, 6 and 7, any provider) under the preload. The module's model-calling
 * functions (generateText, streamText, generateObject, streamObject) are replaced by wrappers
 * (ESM: a wrapper module from the module hooks; CommonJS: Module._load) that change only what
 * they are given:
 *
 * - `model` becomes a view of the provider's model whose `doGenerate` / `doStream` go through the
 *   preload's one model-call mechanism: each call (each step of a multi-step loop) is a decision
 *   of the calling agent, its prompt's messages the context items, read by the `ai-sdk.model`
 *   codec; in a replay the interventions' blocks are replaced in the prompt and the pair's seed is
 *   set. The HTTP request the provider makes under it is not recorded again (the fetch
 *   interception lets calls from inside the model layer through untouched).
 * - each tool's `execute` becomes a recorded action, linked by `toolCallId` to the decision that
 *   asked for it and served from the tape in a replay (never run there without --live-tools).
 * - the call's agent is the `x-causeway-agent` header or `experimental_telemetry.functionId` of the
 *   call, else (in the preload) CAUSEWAY_AGENT or the system prompt; its site is the user's call.
 * - an agent object (`ToolLoopAgent`, ai 5's `Experimental_Agent`) gets the same model view and
 *   tools in its settings when it first generates or streams; its `id` names the agent.
 */
import { aiSdkModel } from "../adapters/codec-ai-sdk";
import type { Codec } from "../adapters/codec";
import { canonical } from "../log/hash";
import { AI_SDK_AGENTS } from "./hooks";
import { isRecord } from "../util/guards";

type Obj = Record<string, unknown>;
type Fn = (...a: unknown[]) => unknown;

/** One model call in progress (see Preload.beginCall). */
export interface ModelCallHandle {
  readonly sent: Obj;
}

/** What the AI SDK hooks use of the preload. */
export interface AiSdkHost {
  /** Tools whose results are trusted (--trusted-tool). */
  readonly trusted: readonly string[];
  /** Runs fn as a call of the program: its site, and the agent when one is named. */
  enter<T>(agent: string | undefined, headers: unknown, fn: () => T): T;
  /** Runs fn below the model layer: model requests it sends on the wire are not recorded again. */
  belowModel<T>(fn: () => T): T;
  /** Starts a model call: agent, seed, interventions applied to `sent`. */
  beginCall(codec: Codec, body: Obj): ModelCallHandle;
  /** Records a model call's answer (or failure). */
  endCall(call: ModelCallHandle, out: { response?: unknown; error?: string }): void;
  /** One tool execution: recorded, linked to the model's call, served from the tape in a replay. */
  tool(name: string, args: Obj, source: string, untrusted: boolean, run: () => Promise<unknown>, link: boolean, callId?: string): Promise<unknown>;
}

/** Options of a language-model call that are not the request (or must not be recorded). */
const NOT_RECORDED = new Set(["abortSignal", "headers", "includeRawChunks"]);

export class AiSdkHooks {
  private readonly models = new WeakMap<object, Obj>();
  private readonly agentProtos = new WeakSet<object>();
  /** Agent settings already holding the recorded model and tools. */
  private readonly adopted = new WeakSet<object>();
  /** Tool calls of a streamed step whose decision is recorded when the step's stream finishes. */
  private readonly awaiting = new Map<string, Promise<void>>();

  constructor(private readonly host: AiSdkHost) {}

  /** An export of the `ai` module: a model-calling function wrapped, or an agent class patched. */
  entry(name: string, fn: Fn): Fn {
    if (AI_SDK_AGENTS.includes(name)) {
      this.agentClass(fn);
      return fn;
    }
    const self = this;
    const wrapped = function (this: unknown, opts: unknown, ...rest: unknown[]) {
      if (!isRecord(opts)) return fn.call(this, opts, ...rest);
      const telemetry = opts.experimental_telemetry;
      const functionId = isRecord(telemetry) && typeof telemetry.functionId === "string" && telemetry.functionId ? telemetry.functionId : undefined;
      const given: Obj = { ...opts };
      if (isRecord(opts.model)) given.model = self.model(opts.model);
      if (isRecord(opts.tools)) given.tools = self.toolSet(opts.tools);
      return self.host.enter(functionId, opts.headers, () => fn.call(this, given, ...rest));
    };
    Object.defineProperty(wrapped, "name", { value: fn.name });
    return wrapped;
  }

  /** An agent class: generate and stream record the agent's calls (its settings adopted on first use). */
  private agentClass(cls: Fn): void {
    const proto = cls.prototype as Obj | undefined;
    if (!proto || this.agentProtos.has(proto)) return;
    this.agentProtos.add(proto);
    const self = this;
    for (const method of ["generate", "stream"]) {
      const orig = proto[method];
      if (typeof orig !== "function") continue;
      proto[method] = function (this: { settings?: unknown }, ...args: unknown[]) {
        const s = this?.settings;
        if (!isRecord(s)) return (orig as Fn).apply(this, args);
        if (!self.adopted.has(s)) {
          const given: Obj = { ...s };
          if (isRecord(s.model)) given.model = self.model(s.model);
          if (isRecord(s.tools)) given.tools = self.toolSet(s.tools);
          self.adopted.add(given);
          this.settings = given;
        }
        const id = typeof s.id === "string" && s.id ? s.id : typeof s.name === "string" && s.name ? s.name : undefined;
        return self.host.enter(id, s.headers, () => (orig as Fn).apply(this, args));
      };
    }
  }

  /** A view of a provider's language model whose calls are recorded. */
  private model(m: Obj): Obj {
    if (typeof m.doGenerate !== "function" || typeof m.doStream !== "function") return m;
    let w = this.models.get(m);
    if (!w) {
      w = Object.create(m) as Obj;
      w.doGenerate = (opts: Obj) => this.generate(m, opts);
      w.doStream = (opts: Obj) => this.stream(m, opts);
      this.models.set(m, w);
    }
    return w;
  }

  /** The call as recorded (and, with interventions applied, as sent). */
  private begin(m: Obj, opts: Obj): { call: ModelCallHandle; opts: Obj } {
    const body: Obj = { model: typeof m.modelId === "string" ? m.modelId : "unknown", provider: typeof m.provider === "string" ? m.provider : undefined };
    for (const [k, v] of Object.entries(opts ?? {})) if (!NOT_RECORDED.has(k) && v !== undefined) body[k] = v;
    const call = this.host.beginCall(aiSdkModel, body);
    const sent: Obj = { ...opts, prompt: call.sent.prompt };
    if (call.sent.seed !== undefined) sent.seed = call.sent.seed;
    return { call, opts: sent };
  }

  private async generate(m: Obj, options: Obj): Promise<unknown> {
    const { call, opts } = this.begin(m, options);
    let res: unknown;
    try {
      res = await this.host.belowModel(() => (m.doGenerate as Fn).call(m, opts));
    } catch (err) {
      this.host.endCall(call, { error: errText(err) });
      throw err;
    }
    this.host.endCall(call, { response: res });
    return res;
  }

  private async stream(m: Obj, options: Obj): Promise<unknown> {
    const { call, opts } = this.begin(m, options);
    let res: Obj;
    try {
      res = (await this.host.belowModel(() => (m.doStream as Fn).call(m, opts))) as Obj;
    } catch (err) {
      this.host.endCall(call, { error: errText(err) });
      throw err;
    }
    if (!isRecord(res) || !(res.stream instanceof ReadableStream)) {
      this.host.endCall(call, { error: "the model's stream could not be read" });
      return res;
    }
    const parts: unknown[] = [];
    const release: (() => void)[] = [];
    let done = false;
    const finish = (error?: string) => {
      if (done) return;
      done = true;
      this.host.endCall(call, error === undefined ? { response: aiSdkModel.accumulate(parts) } : { error });
      for (const r of release) r();
    };
    const awaiting = this.awaiting;
    const tap = new TransformStream<unknown, unknown>({
      transform(part, ctl) {
        parts.push(part);
        if (isRecord(part)) {
          // ai 5 and 6 run a streamed tool call before the step's stream ends: its action waits
          // for the decision, recorded (below) when the finish part goes by
          if (part.type === "tool-call" && typeof part.toolCallId === "string") awaiting.set(part.toolCallId, new Promise<void>((r) => release.push(r)));
          if (part.type === "finish") finish();
          else if (part.type === "error") finish(errText(part.error));
        }
        ctl.enqueue(part);
      },
      flush() {
        finish();
      },
    });
    return { ...res, stream: (res.stream as ReadableStream<unknown>).pipeThrough(tap) };
  }

  private toolSet(tools: Obj): Obj {
    const out: Obj = {};
    for (const [name, t] of Object.entries(tools)) out[name] = isRecord(t) && typeof t.execute === "function" ? this.tool(name, t) : t;
    return out;
  }

  /** A copy of a tool whose `execute` is a recorded action. */
  private tool(name: string, t: Obj): Obj {
    const execute = t.execute as Fn;
    const self = this;
    const w = Object.assign(Object.create(Object.getPrototypeOf(t)) as Obj, t);
    w.execute = async function (this: unknown, input: unknown, options: unknown) {
      const id = isRecord(options) && typeof options.toolCallId === "string" ? options.toolCallId : undefined;
      const wait = id ? self.awaiting.get(id) : undefined;
      if (wait) {
        await wait;
        self.awaiting.delete(id!);
      }
      const args = isRecord(input) ? input : { input };
      return self.host.tool(
        name,
        args,
        `tool:${name} ${canonical(args)}`,
        !self.host.trusted.includes(name),
        async () => lastOf(await execute.call(this, input, options)),
        true,
        id,
      );
    };
    return w;
  }
}

/** A tool's result: an async iterable (preliminary results) ends in its last value. */
async function lastOf(r: unknown): Promise<unknown> {
  if (!r || typeof r !== "object" || typeof (r as AsyncIterable<unknown>)[Symbol.asyncIterator] !== "function") return r;
  let last: unknown;
  for await (const v of r as AsyncIterable<unknown>) last = v;
  return last;
}

function errText(err: unknown): string {
  return err instanceof Error ? `${err.name}: ${err.message}`.slice(0, 2000) : String(err).slice(0, 2000);
}
