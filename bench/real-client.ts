/**
 * The real-model benchmark's model client: one chat call to an OpenAI-compatible chat-completions
 * endpoint or an Anthropic messages endpoint, over plain HTTP (fetch).
 *
 * It never throws for what a model or a server does: an HTTP error, a body that is not JSON, a
 * timeout, free text where a tool call was wanted, a tool call to a tool that does not exist or
 * with arguments that are not JSON: each is counted and the call answers with what could be read
 * (often nothing). The one thing it throws is {@link CapReached}, before a call would pass the
 * hard cap (calls, or dollars at the given price), so nothing is ever sent beyond it.
 *
 * The API key is read from the environment variable the user names and is only ever put in a
 * request header; every text a server sends back is scrubbed of it before anyone sees it.
 */

export type Api = "openai" | "anthropic";

export interface ToolSpec {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

/** A tool call the agent already made and its result: what it read before this call. */
export interface Read {
  tool: string;
  args: Record<string, unknown>;
  result: string;
}

export interface ChatRequest {
  system: string;
  user: string;
  /** Sent as one assistant turn calling these tools, then their results (tool messages / tool_result blocks). */
  reads?: Read[];
  /** Offered as functions (the read tools must be among them: Anthropic's API asks for it). */
  tools?: ToolSpec[];
  /** Only these tools' calls are kept as the reply's calls; others offered (the read tools) are dropped. */
  act?: string[];
  /** "none": answer in text (notes, a review). */
  toolChoice?: "auto" | "none";
  maxTokens?: number;
}

export interface ToolCallOut {
  tool: string;
  args: Record<string, unknown>;
}

export interface ChatReply {
  text: string;
  calls: ToolCallOut[];
  usage: { input_tokens: number; output_tokens: number; estimated: boolean };
  /** Set when the call failed (HTTP error, no JSON, timeout…): the reply is then empty. */
  error?: string;
}

/** Dollars per million tokens, input and output. */
export interface Price {
  input: number;
  output: number;
}

export interface ClientOptions {
  api: Api;
  /** The endpoint as given: a base URL (…/v1) or the full chat/messages URL. */
  endpoint: string;
  model: string;
  apiKey?: string;
  maxCalls?: number;
  maxUsd?: number;
  price?: Price;
  temperature?: number;
  timeoutMs?: number;
  /** Tries again after a 429 or 503 (default 2). */
  retries?: number;
  /** First wait before trying again, doubled each time, unless the server sends Retry-After (default 1 s). */
  retryWaitMs?: number;
}

export class CapReached extends Error {
  constructor(readonly reason: string) {
    super(`stopped by the cap: ${reason}`);
    this.name = "CapReached";
  }
}

/** What the client counted (what the results report). */
export interface ClientCounts {
  /** HTTP requests sent (each counts against --max-calls). */
  calls: number;
  input_tokens: number;
  output_tokens: number;
  /** Dollars, when a price was given. */
  usd: number | null;
  /** Calls that failed, by kind ("http 500", "not json", "timeout", "network"). */
  errors: Record<string, number>;
  /** Replies with no usable tool call although tools were offered and some text was given. */
  free_text: number;
  /** Tool calls read out of free text (a JSON object in the reply's text). */
  calls_from_text: number;
  /** Tool calls dropped: unknown tool, or arguments that are not a JSON object. */
  odd_tool_calls: number;
}

/** "openai" or "anthropic" from the URL's path: …/messages is Anthropic's, anything else OpenAI's. */
export function apiFromUrl(url: string): Api {
  return /\/messages\/?$/.test(new URL(url).pathname) ? "anthropic" : "openai";
}

/** The URL requests go to: a base URL gets the API's path appended; a full one is kept. */
export function requestUrl(endpoint: string, api: Api): string {
  const u = new URL(endpoint);
  const p = u.pathname.replace(/\/+$/, "");
  if (api === "openai" && !/\/chat\/completions$/.test(p)) u.pathname = (/\/v1$/.test(p) ? p : `${p}/v1`) + "/chat/completions";
  if (api === "anthropic" && !/\/messages$/.test(p)) u.pathname = (/\/v1$/.test(p) ? p : `${p}/v1`) + "/messages";
  return u.toString();
}

/** What the results may say about an endpoint: the API and whether it is on this machine; never its URL. */
export function endpointKind(endpoint: string, api: Api): { api: string; where: "local" | "hosted" } {
  const host = new URL(endpoint).hostname.replace(/^\[|\]$/g, "");
  const local =
    host === "localhost" ||
    host === "::1" ||
    /^127\./.test(host) ||
    /^10\./.test(host) ||
    /^192\.168\./.test(host) ||
    /^172\.(1[6-9]|2\d|3[01])\./.test(host) ||
    host.endsWith(".local");
  return { api: api === "openai" ? "openai chat completions" : "anthropic messages", where: local ? "local" : "hosted" };
}

const estimateTokens = (s: string) => Math.ceil(s.length / 4);

export class ModelClient {
  readonly counts: ClientCounts;
  /** Set once a call was refused by the cap: everything after it stops. */
  capped: CapReached | null = null;
  private readonly url: string;
  private readonly basic: string | undefined;
  private readonly secrets: string[];

  constructor(readonly o: ClientOptions) {
    // fetch refuses a URL with credentials: they go in a Basic authorization header instead
    const target = new URL(requestUrl(o.endpoint, o.api));
    if (target.username || target.password)
      this.basic = Buffer.from(`${decodeURIComponent(target.username)}:${decodeURIComponent(target.password)}`).toString("base64");
    target.username = "";
    target.password = "";
    this.url = target.toString();
    this.counts = { calls: 0, input_tokens: 0, output_tokens: 0, usd: o.price ? 0 : null, errors: {}, free_text: 0, calls_from_text: 0, odd_tool_calls: 0 };
    const u = new URL(o.endpoint);
    this.secrets = [o.apiKey, u.username, u.password, this.basic, ...[...u.searchParams.values()]].filter((s): s is string => !!s && s.length >= 4);
  }

  /** Removes the key (and the endpoint's credentials and query values) from a text. */
  scrub(s: string): string {
    let out = s;
    for (const k of this.secrets) out = out.split(k).join("[redacted]");
    return out;
  }

  private cost(input: number, output: number): number {
    return this.o.price ? (input * this.o.price.input + output * this.o.price.output) / 1e6 : 0;
  }

  /** Throws CapReached when one more call (of this size) would pass a cap. */
  private reserve(req: ChatRequest): void {
    this.reserveTokens(estimateTokens(req.system + req.user + JSON.stringify(req.reads ?? []) + JSON.stringify(req.tools ?? [])), req.maxTokens ?? 512);
  }

  private reserveTokens(input: number, maxOut: number): void {
    if (this.capped) throw this.capped;
    if (this.o.maxCalls !== undefined && this.counts.calls + 1 > this.o.maxCalls) throw (this.capped = new CapReached(`${this.o.maxCalls} model calls`));
    if (this.o.maxUsd !== undefined && this.o.price) {
      // the next call at its longest (max_tokens out) must fit under the cap
      const next = this.cost(input, maxOut);
      if ((this.counts.usd ?? 0) + next > this.o.maxUsd) throw (this.capped = new CapReached(`$${this.o.maxUsd}`));
    }
    this.counts.calls++;
  }

  private fail(kind: string, detail: string, req: ChatRequest): ChatReply {
    this.counts.errors[kind] = (this.counts.errors[kind] ?? 0) + 1;
    return {
      text: "",
      calls: [],
      usage: { input_tokens: estimateTokens(req.system + req.user + JSON.stringify(req.reads ?? [])), output_tokens: 0, estimated: true },
      error: this.scrub(`${kind}: ${detail}`).slice(0, 300),
    };
  }

  private headers(): Record<string, string> {
    const headers: Record<string, string> = { "content-type": "application/json" };
    if (this.o.api === "anthropic") {
      headers["anthropic-version"] = "2023-06-01";
      if (this.o.apiKey) headers["x-api-key"] = this.o.apiKey;
    } else if (this.o.apiKey) headers.authorization = `Bearer ${this.o.apiKey}`;
    if (this.basic && !headers.authorization) headers.authorization = `Basic ${this.basic}`;
    return headers;
  }

  /** The request body this client sends for a chat request (what a recording keeps as the wire request). */
  wireBody(req: ChatRequest): Record<string, unknown> {
    return this.o.api === "anthropic" ? anthropicBody(this.o, req) : openaiBody(this.o, req);
  }

  /**
   * Sends a body as it is (an agentless replay's request) and answers the provider's JSON
   * response, counted against the caps like every call and tried again after a 429 or 503 as
   * chat() is. Like chat(), it never throws for what a server does: a failure is counted and
   * answered with an empty reply in the provider's shape. Only the cap throws (CapReached).
   */
  async post(body: unknown): Promise<unknown> {
    const text = JSON.stringify(body);
    const maxOut = Number((body as { max_tokens?: unknown } | null)?.max_tokens);
    const input = estimateTokens(text);
    const empty =
      this.o.api === "anthropic"
        ? { role: "assistant", content: [{ type: "text", text: "" }] }
        : { choices: [{ message: { role: "assistant", content: "" } }] };
    const failed = (kind: string) => {
      this.counts.errors[kind] = (this.counts.errors[kind] ?? 0) + 1;
      return empty;
    };
    let res: Response | undefined;
    let raw = "";
    for (let attempt = 0; ; attempt++) {
      this.reserveTokens(input, Number.isFinite(maxOut) && maxOut > 0 ? maxOut : 512);
      try {
        res = await fetch(this.url, { method: "POST", headers: this.headers(), body: text, signal: AbortSignal.timeout(this.o.timeoutMs ?? 120_000) });
        raw = await res.text();
      } catch (err) {
        const name = err instanceof Error ? err.name : "";
        return failed(name === "TimeoutError" || name === "AbortError" ? "timeout" : "network");
      }
      if ((res.status !== 429 && res.status !== 503) || attempt >= (this.o.retries ?? 2)) break;
      this.counts.errors[`http ${res.status}, tried again`] = (this.counts.errors[`http ${res.status}, tried again`] ?? 0) + 1;
      const after = Number(res.headers.get("retry-after"));
      await new Promise((r) =>
        setTimeout(r, Math.min(30_000, Number.isFinite(after) && after > 0 ? after * 1000 : (this.o.retryWaitMs ?? 1000) * 2 ** attempt)),
      );
    }
    if (!res.ok) return failed(`http ${res.status}`);
    let json: unknown;
    try {
      json = JSON.parse(this.scrub(raw));
    } catch {
      return failed("not json");
    }
    if (!isObj(json)) return failed("unreadable reply");
    const u = isObj(json.usage) ? json.usage : {};
    const usage = usageOf(u.prompt_tokens ?? u.input_tokens, u.completion_tokens ?? u.output_tokens) ?? {
      input_tokens: input,
      output_tokens: estimateTokens(raw),
      estimated: true,
    };
    this.counts.input_tokens += usage.input_tokens;
    this.counts.output_tokens += usage.output_tokens;
    if (this.counts.usd !== null) this.counts.usd += this.cost(usage.input_tokens, usage.output_tokens);
    return json;
  }

  async chat(req: ChatRequest): Promise<ChatReply> {
    const headers = this.headers();
    const body = JSON.stringify(this.wireBody(req));
    let res: Response | undefined;
    let raw = "";
    // a rate limit or an overloaded server (429, 503) is tried again, each try a call against the cap
    for (let attempt = 0; ; attempt++) {
      this.reserve(req);
      try {
        res = await fetch(this.url, { method: "POST", headers, body, signal: AbortSignal.timeout(this.o.timeoutMs ?? 120_000) });
        raw = await res.text();
      } catch (err) {
        const name = err instanceof Error ? err.name : "";
        return this.fail(name === "TimeoutError" || name === "AbortError" ? "timeout" : "network", err instanceof Error ? err.message : String(err), req);
      }
      if ((res.status !== 429 && res.status !== 503) || attempt >= (this.o.retries ?? 2)) break;
      this.counts.errors[`http ${res.status}, tried again`] = (this.counts.errors[`http ${res.status}, tried again`] ?? 0) + 1;
      const after = Number(res.headers.get("retry-after"));
      await new Promise((r) =>
        setTimeout(r, Math.min(30_000, Number.isFinite(after) && after > 0 ? after * 1000 : (this.o.retryWaitMs ?? 1000) * 2 ** attempt)),
      );
    }
    if (!res.ok) return this.fail(`http ${res.status}`, raw, req);
    let json: unknown;
    try {
      json = JSON.parse(raw);
    } catch {
      return this.fail("not json", raw, req);
    }
    const reply = this.o.api === "anthropic" ? readAnthropic(json) : readOpenai(json);
    if (!reply) return this.fail("unreadable reply", raw, req);
    const known = new Set(req.act ?? (req.tools ?? []).map((t) => t.name));
    const offered = new Set((req.tools ?? []).map((t) => t.name));
    let calls = reply.calls;
    if (known.size && req.toolChoice !== "none" && !calls.length && reply.text) {
      calls = callsInText(reply.text);
      if (calls.length) this.counts.calls_from_text += calls.length;
      else this.counts.free_text++;
    }
    if (req.toolChoice === "none") calls = [];
    // a read tool called again is not an action and not odd: dropped
    calls = calls.filter((c) => known.has(c.tool) || !offered.has(c.tool));
    const good = calls.filter((c) => known.has(c.tool) && c.args && typeof c.args === "object" && !Array.isArray(c.args));
    this.counts.odd_tool_calls += calls.length - good.length;
    const usage = reply.usage ?? {
      input_tokens: estimateTokens(req.system + req.user + JSON.stringify(req.reads ?? [])),
      output_tokens: estimateTokens(reply.text + JSON.stringify(good)),
      estimated: true,
    };
    this.counts.input_tokens += usage.input_tokens;
    this.counts.output_tokens += usage.output_tokens;
    if (this.counts.usd !== null) this.counts.usd += this.cost(usage.input_tokens, usage.output_tokens);
    return {
      text: this.scrub(reply.text),
      calls: good.map((c) => ({ tool: c.tool, args: JSON.parse(this.scrub(JSON.stringify(c.args))) as Record<string, unknown> })),
      usage,
    };
  }
}

// ------------------------------------------------------------------------------ wire formats

function openaiBody(o: ClientOptions, req: ChatRequest): Record<string, unknown> {
  const messages: Record<string, unknown>[] = [
    { role: "system", content: req.system },
    { role: "user", content: req.user },
  ];
  const reads = req.reads ?? [];
  if (reads.length) {
    messages.push({
      role: "assistant",
      content: null,
      tool_calls: reads.map((r, i) => ({ id: `call_${i}`, type: "function", function: { name: r.tool, arguments: JSON.stringify(r.args) } })),
    });
    reads.forEach((r, i) => messages.push({ role: "tool", tool_call_id: `call_${i}`, content: r.result }));
  }
  const body: Record<string, unknown> = { model: o.model, messages, max_tokens: req.maxTokens ?? 512 };
  if (o.temperature !== undefined) body.temperature = o.temperature;
  if (req.tools?.length) {
    body.tools = req.tools.map((t) => ({ type: "function", function: { name: t.name, description: t.description, parameters: t.parameters } }));
    if (req.toolChoice) body.tool_choice = req.toolChoice;
  }
  return body;
}

function anthropicBody(o: ClientOptions, req: ChatRequest): Record<string, unknown> {
  const messages: Record<string, unknown>[] = [{ role: "user", content: req.user }];
  const reads = req.reads ?? [];
  if (reads.length) {
    messages.push({ role: "assistant", content: reads.map((r, i) => ({ type: "tool_use", id: `toolu_${i}`, name: r.tool, input: r.args })) });
    messages.push({ role: "user", content: reads.map((r, i) => ({ type: "tool_result", tool_use_id: `toolu_${i}`, content: r.result })) });
  }
  const body: Record<string, unknown> = { model: o.model, system: req.system, messages, max_tokens: req.maxTokens ?? 512 };
  if (o.temperature !== undefined) body.temperature = o.temperature;
  if (req.tools?.length) {
    body.tools = req.tools.map((t) => ({ name: t.name, description: t.description, input_schema: t.parameters }));
    if (req.toolChoice) body.tool_choice = { type: req.toolChoice };
  }
  return body;
}

type Raw = { text: string; calls: ToolCallOut[]; usage?: ChatReply["usage"] };
const isObj = (x: unknown): x is Record<string, any> => !!x && typeof x === "object" && !Array.isArray(x);
const num = (x: unknown) => (typeof x === "number" && Number.isFinite(x) && x >= 0 ? x : null);

/** Arguments as a server sent them: a JSON string (OpenAI), an object (Anthropic), or junk (→ null). */
function argsOf(a: unknown): Record<string, unknown> | null {
  if (isObj(a)) return a;
  if (typeof a !== "string") return a === undefined ? {} : null;
  if (!a.trim()) return {};
  try {
    const v: unknown = JSON.parse(a);
    return isObj(v) ? v : null;
  } catch {
    return null;
  }
}

function usageOf(inTok: unknown, outTok: unknown): ChatReply["usage"] | undefined {
  const i = num(inTok);
  const o = num(outTok);
  return i !== null && o !== null ? { input_tokens: i, output_tokens: o, estimated: false } : undefined;
}

export function readOpenai(json: unknown): Raw | null {
  if (!isObj(json) || !Array.isArray(json.choices) || !isObj(json.choices[0])) return null;
  const m = json.choices[0].message;
  if (!isObj(m)) return null;
  const text =
    typeof m.content === "string"
      ? m.content
      : Array.isArray(m.content)
        ? m.content.map((p: any) => (typeof p?.text === "string" ? p.text : "")).join("\n")
        : "";
  const calls = (Array.isArray(m.tool_calls) ? m.tool_calls : []).map((c: any) => ({
    tool: String(c?.function?.name ?? ""),
    args: argsOf(c?.function?.arguments) as Record<string, unknown>,
  }));
  return { text, calls, usage: isObj(json.usage) ? usageOf(json.usage.prompt_tokens, json.usage.completion_tokens) : undefined };
}

export function readAnthropic(json: unknown): Raw | null {
  if (!isObj(json) || !Array.isArray(json.content)) return null;
  const text = json.content
    .filter((b: any) => b?.type === "text" && typeof b.text === "string")
    .map((b: any) => b.text as string)
    .join("\n");
  const calls = json.content
    .filter((b: any) => b?.type === "tool_use")
    .map((b: any) => ({ tool: String(b?.name ?? ""), args: argsOf(b?.input) as Record<string, unknown> }));
  return { text, calls, usage: isObj(json.usage) ? usageOf(json.usage.input_tokens, json.usage.output_tokens) : undefined };
}

/**
 * Tool calls a model wrote as text: JSON objects with a tool name ("name", "tool" or "function")
 * and arguments ("arguments", "args", "parameters" or "input"), bare, in a code fence or in
 * `<tool_call>` tags, as local models often do.
 */
export function callsInText(text: string): ToolCallOut[] {
  const out: ToolCallOut[] = [];
  for (const obj of jsonObjects(text)) {
    const list = Array.isArray(obj) ? obj : [obj];
    for (const o of list) {
      if (!isObj(o)) continue;
      const fn = isObj(o.function) ? o.function : o;
      const name = fn.name ?? fn.tool ?? (typeof o.function === "string" ? o.function : undefined);
      if (typeof name !== "string" || !name) continue;
      const args = argsOf(fn.arguments ?? fn.args ?? fn.parameters ?? fn.input);
      out.push({ tool: name, args: args as Record<string, unknown> });
    }
  }
  return out;
}

/** Balanced top-level JSON objects or arrays in a text that parse. Linear in the text. */
function jsonObjects(text: string): unknown[] {
  const out: unknown[] = [];
  let i = 0;
  while (i < text.length && out.length < 20) {
    const start = text.slice(i).search(/[[{]/);
    if (start < 0) break;
    const s = i + start;
    let depth = 0;
    let inStr = false;
    let end = -1;
    for (let j = s; j < text.length; j++) {
      const c = text[j];
      if (inStr) {
        if (c === "\\") j++;
        else if (c === '"') inStr = false;
      } else if (c === '"') inStr = true;
      else if (c === "{" || c === "[") depth++;
      else if (c === "}" || c === "]") {
        depth--;
        if (depth === 0) {
          end = j;
          break;
        }
      }
    }
    if (end < 0) break;
    try {
      out.push(JSON.parse(text.slice(s, end + 1)));
      i = end + 1;
    } catch {
      i = s + 1;
    }
  }
  return out;
}
