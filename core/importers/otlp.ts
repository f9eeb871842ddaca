/**
 * Reading OTLP/JSON traces and the GenAI semantic conventions in them: spans (one TracesData
 * object, an array of them, or JSON Lines as the file exporter writes), attribute values as typed
 * values (64-bit integers and times as strings), and the content of model calls in each of the
 * forms instrumentations use — the current attributes (gen_ai.input.messages, …output.messages,
 * …system_instructions, …tool.definitions), the older span events (gen_ai.user.message,
 * gen_ai.choice, gen_ai.content.prompt…) and indexed attributes (gen_ai.prompt.0.content…).
 * What a span did not capture is reported as absent, never filled in.
 */
import fs from "node:fs";
import { isRecord } from "../util/guards";

export interface OtelSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  start: bigint;
  end: bigint;
  attrs: Record<string, unknown>;
  events: { name: string; time: bigint; attrs: Record<string, unknown> }[];
  error: boolean;
  statusMessage: string;
  resource: Record<string, unknown>;
  /** Order in the file (ties). */
  order: number;
}

/** A message part, whatever convention it came from. */
export type Part =
  | { type: "text"; text: string }
  | { type: "tool_call"; id: string | null; name: string; args: unknown }
  | { type: "tool_result"; id: string | null; content: unknown }
  | { type: "other"; value: unknown };

export interface Message {
  role: string;
  parts: Part[];
}

/** What a model-call span recorded of its content; undefined = not captured. */
export interface CallContent {
  system?: string[];
  tools?: unknown[];
  input?: Message[];
  output?: Message[];
}

const MAX_FILE_BYTES = 512 << 20;
const MAX_JSON_ATTR = 16 << 20;
const HEX_RE = /^[0-9a-fA-F]{1,64}$/;

const arr = (x: unknown): unknown[] => (Array.isArray(x) ? x : []);

/** An OTLP AnyValue as a plain value (int64 strings become numbers when safe). */
export function anyValue(v: unknown, depth = 0): unknown {
  if (!isRecord(v) || depth > 32) return null;
  if ("stringValue" in v) return String(v.stringValue);
  if ("boolValue" in v) return v.boolValue === true;
  if ("intValue" in v) {
    const n = Number(v.intValue);
    return Number.isSafeInteger(n) ? n : String(v.intValue);
  }
  if ("doubleValue" in v) return Number(v.doubleValue);
  if ("arrayValue" in v) return arr(isRecord(v.arrayValue) ? v.arrayValue.values : []).map((x) => anyValue(x, depth + 1));
  if ("kvlistValue" in v) return attributes(isRecord(v.kvlistValue) ? v.kvlistValue.values : [], depth + 1);
  if ("bytesValue" in v) return String(v.bytesValue);
  return null;
}

/** A KeyValue list as an object. */
export function attributes(list: unknown, depth = 0): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const kv of arr(list)) if (isRecord(kv) && typeof kv.key === "string") out[kv.key] = anyValue(kv.value, depth);
  return out;
}

function nanos(x: unknown): bigint {
  try {
    if (typeof x === "string" && /^\d{1,25}$/.test(x)) return BigInt(x);
    if (typeof x === "number" && Number.isFinite(x) && x >= 0) return BigInt(Math.round(x));
  } catch {
    /* fall through */
  }
  return 0n;
}

function id(x: unknown): string {
  return typeof x === "string" && HEX_RE.test(x) ? x.toLowerCase() : typeof x === "string" ? Buffer.from(x, "base64").toString("hex").slice(0, 64) : "";
}

/** The TracesData objects of a file: one object, an array, or one per line. */
export function readTracesFile(file: string): unknown[] {
  const st = fs.statSync(file);
  if (st.size > MAX_FILE_BYTES) throw new Error(`${file} is ${(st.size / 1048576).toFixed(0)} MB, over the ${MAX_FILE_BYTES >> 20} MB limit`);
  const text = fs.readFileSync(file, "utf8");
  try {
    const v = JSON.parse(text);
    return Array.isArray(v) ? v : [v];
  } catch {
    const out: unknown[] = [];
    text.split(/\r?\n/).forEach((line, i) => {
      if (!line.trim()) return;
      try {
        out.push(JSON.parse(line));
      } catch {
        throw new Error(`${file} line ${i + 1} is not JSON (expected OTLP/JSON: one TracesData object, or one per line)`);
      }
    });
    return out;
  }
}

/** Every span of the TracesData objects, with its resource's attributes. */
export function spansOf(datas: unknown[]): OtelSpan[] {
  const out: OtelSpan[] = [];
  for (const d of datas) {
    for (const rs of arr(isRecord(d) ? d.resourceSpans : undefined)) {
      if (!isRecord(rs)) continue;
      const resource = attributes(isRecord(rs.resource) ? rs.resource.attributes : []);
      for (const ss of [...arr(rs.scopeSpans), ...arr(rs.instrumentationLibrarySpans)]) {
        for (const s of arr(isRecord(ss) ? ss.spans : undefined)) {
          if (!isRecord(s)) continue;
          const status = isRecord(s.status) ? s.status : {};
          out.push({
            traceId: id(s.traceId),
            spanId: id(s.spanId),
            parentSpanId: id(s.parentSpanId),
            name: typeof s.name === "string" ? s.name : "",
            start: nanos(s.startTimeUnixNano),
            end: nanos(s.endTimeUnixNano),
            attrs: attributes(s.attributes),
            events: arr(s.events)
              .filter(isRecord)
              .map((e) => ({ name: String(e.name ?? ""), time: nanos(e.timeUnixNano), attrs: attributes(e.attributes) })),
            error: status.code === 2 || status.code === "STATUS_CODE_ERROR",
            statusMessage: typeof status.message === "string" ? status.message : "",
            resource,
            order: out.length,
          });
        }
      }
    }
  }
  return out;
}

/** The GenAI operation of a span ("chat", "execute_tool", "invoke_agent"…), or "" for other spans. */
export function operationOf(s: OtelSpan): string {
  const op = s.attrs["gen_ai.operation.name"];
  if (typeof op === "string" && op) return op;
  const m = /^(chat|generate_content|text_completion|execute_tool|invoke_agent|create_agent|embeddings)\b/.exec(s.name);
  if (m) return m[1];
  if (typeof s.attrs["gen_ai.tool.name"] === "string") return "execute_tool";
  if (typeof s.attrs["gen_ai.request.model"] === "string") return "chat";
  return "";
}

/** A JSON-string attribute (or an already structured one) as a value; undefined when absent or not JSON. */
function jsonAttr(v: unknown): unknown {
  if (typeof v !== "string") return v;
  if (v.length > MAX_JSON_ATTR) return undefined;
  try {
    return JSON.parse(v);
  } catch {
    return undefined;
  }
}

function partOf(p: unknown): Part {
  if (!isRecord(p)) return typeof p === "string" ? { type: "text", text: p } : { type: "other", value: p };
  const type = String(p.type ?? "");
  if (type === "text" || type === "reasoning") return { type: "text", text: String(p.content ?? p.text ?? "") };
  if (type === "tool_call")
    return { type: "tool_call", id: typeof p.id === "string" ? p.id : null, name: String(p.name ?? ""), args: jsonAttr(p.arguments) ?? p.arguments ?? null };
  if (type === "tool_call_response") return { type: "tool_result", id: typeof p.id === "string" ? p.id : null, content: p.response ?? p.result ?? null };
  return { type: "other", value: p };
}

/** Messages in the current convention ({role, parts}) or an older one ({role, content, tool_calls}). */
export function messagesOf(v: unknown): Message[] | undefined {
  const list = jsonAttr(v);
  if (!Array.isArray(list)) return undefined;
  return list.filter(isRecord).map((m) => {
    if (Array.isArray(m.parts)) return { role: String(m.role ?? "user"), parts: m.parts.map(partOf) };
    return legacyMessage(m);
  });
}

/** {role, content, tool_calls: [{id, function: {name, arguments}}], tool_call_id} → Message. */
function legacyMessage(m: Record<string, unknown>): Message {
  const role = String(m.role ?? "user");
  const parts: Part[] = [];
  const content = jsonAttr(m.content) ?? m.content;
  if (role === "tool")
    parts.push({
      type: "tool_result",
      id: typeof m.tool_call_id === "string" ? m.tool_call_id : typeof m.id === "string" ? m.id : null,
      content: m.content ?? null,
    });
  else if (typeof m.content === "string") parts.push({ type: "text", text: m.content });
  else if (Array.isArray(content)) for (const c of content) parts.push(isRecord(c) && typeof c.text === "string" ? { type: "text", text: c.text } : partOf(c));
  for (const c of arr(jsonAttr(m.tool_calls) ?? m.tool_calls)) {
    if (!isRecord(c)) continue;
    const f = isRecord(c.function) ? c.function : c;
    parts.push({
      type: "tool_call",
      id: typeof c.id === "string" ? c.id : null,
      name: String(f.name ?? ""),
      args: jsonAttr(f.arguments) ?? f.arguments ?? null,
    });
  }
  return { role, parts };
}

/** Indexed attributes: prefix.0.role, prefix.0.content, prefix.0.tool_calls.1.name… */
function indexedMessages(attrs: Record<string, unknown>, prefix: string): Message[] | undefined {
  const rows = new Map<number, Record<string, unknown>>();
  for (const [k, v] of Object.entries(attrs)) {
    if (!k.startsWith(prefix + ".")) continue;
    const m = /^(\d{1,5})\.(.+)$/.exec(k.slice(prefix.length + 1));
    if (!m) continue;
    const row = rows.get(Number(m[1])) ?? {};
    rows.set(Number(m[1]), row);
    const tc = /^tool_calls\.(\d{1,4})\.(id|name|arguments)$/.exec(m[2]);
    if (tc) {
      const calls = (row.tool_calls ??= []) as Record<string, unknown>[];
      (calls[Number(tc[1])] ??= {})[tc[2]] = v;
    } else row[m[2]] = v;
  }
  if (!rows.size) return undefined;
  return [...rows.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([, r]) =>
      legacyMessage({
        ...r,
        tool_calls: arr(r.tool_calls)
          .filter(Boolean)
          .map((c) => ({ id: (c as Record<string, unknown>).id, function: c })),
      }),
    );
}

/** The body of an older GenAI span event, from its attributes. */
function eventBody(attrs: Record<string, unknown>): Record<string, unknown> {
  const packed = jsonAttr(attrs["gen_ai.event.content"] ?? attrs["event.body"] ?? attrs.body);
  return isRecord(packed) ? packed : attrs;
}

/** What a model-call span captured, in whichever convention it used. */
export function callContent(s: OtelSpan): CallContent {
  const a = s.attrs;
  const out: CallContent = {};
  const sys = jsonAttr(a["gen_ai.system_instructions"]);
  if (Array.isArray(sys)) out.system = sys.map((p) => partOf(p)).flatMap((p) => (p.type === "text" ? [p.text] : []));
  else if (typeof a["gen_ai.system_instructions"] === "string") out.system = [a["gen_ai.system_instructions"]];
  const tools = jsonAttr(a["gen_ai.tool.definitions"]);
  if (Array.isArray(tools)) out.tools = tools;
  out.input = messagesOf(a["gen_ai.input.messages"]) ?? indexedMessages(a, "gen_ai.prompt");
  out.output = messagesOf(a["gen_ai.output.messages"]) ?? indexedMessages(a, "gen_ai.completion");
  if (!out.input || !out.output) {
    const input: Message[] = [];
    const output: Message[] = [];
    for (const e of s.events) {
      const b = eventBody(e.attrs);
      const role = /^gen_ai\.(system|user|assistant|tool)\.message$/.exec(e.name)?.[1];
      if (role) input.push(legacyMessage({ ...b, role: b.role ?? role }));
      else if (e.name === "gen_ai.choice")
        output.push(legacyMessage({ role: "assistant", ...(isRecord(jsonAttr(b.message)) ? (jsonAttr(b.message) as Record<string, unknown>) : b) }));
      else if (e.name === "gen_ai.content.prompt") input.push(...(messagesOf(e.attrs["gen_ai.prompt"]) ?? []));
      else if (e.name === "gen_ai.content.completion") output.push(...(messagesOf(e.attrs["gen_ai.completion"]) ?? []));
    }
    if (!out.input && input.length) out.input = input;
    if (!out.output && output.length) out.output = output;
  }
  return out;
}
