/**
 * The pieces every codec reads a body with. Everything here reads attacker-controlled JSON: nothing
 * is trusted to have the documented shape, unknown parts are kept as they are (inline in the
 * recorded request) and never become items.
 */
import type { JsonPath } from "../util/json-path";
import { isRecord } from "../util/guards";
import { PLACEHOLDER, type BlockRole, type RequestBlock } from "./codec";

/** Longest tool-call argument string parsed as JSON. */
const MAX_ARGS_CHARS = 4 * 1024 * 1024;

export type Obj = Record<string, unknown>;
export const arr = (x: unknown): unknown[] => (Array.isArray(x) ? x : []);
export const str = (x: unknown): string | undefined => (typeof x === "string" ? x : undefined);
export const count = (x: unknown): number | undefined => (typeof x === "number" && Number.isInteger(x) && x >= 0 ? x : undefined);

/** Tool-call arguments as sent (a JSON string) → a value; text that is not JSON stays text. */
export function parseArgs(s: unknown): unknown {
  if (typeof s !== "string") return s ?? {};
  if (s.length > MAX_ARGS_CHARS) return { _raw: s.slice(0, 200) + "…", _truncated: true };
  if (!s.trim()) return {};
  try {
    return JSON.parse(s);
  } catch {
    return { _raw: s };
  }
}

/** A tool's result as the text a client sends back. */
export function resultText(result: unknown): string {
  if (typeof result === "string") return result;
  try {
    return JSON.stringify(result) ?? "null";
  } catch {
    return String(result);
  }
}

/** The text parts of a message's content joined by lines (a string is its own text). */
export function textOfParts(content: unknown, types: readonly string[]): string {
  if (typeof content === "string") return content;
  return arr(content)
    .filter((p) => isRecord(p) && types.includes(String(p.type)) && typeof p.text === "string")
    .map((p) => (p as Obj).text as string)
    .join("\n");
}

/** A body's fields but the dropped ones (and undefined ones). */
export function pick(body: unknown, drop: readonly string[]): Record<string, unknown> {
  if (!isRecord(body)) return {};
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(body)) if (!drop.includes(k) && v !== undefined) out[k] = v;
  return out;
}

/** A removed part in the shape it had: a list of one text part, one text part, or the text. */
export function placeholderOf(original: unknown, textType: string): unknown {
  if (Array.isArray(original)) return [{ type: textType, text: PLACEHOLDER }];
  if (isRecord(original)) return { type: textType, text: PLACEHOLDER };
  return PLACEHOLDER;
}

/** Content blocks of a message: a string is one block; text parts are blocks by their text. */
export function contentBlocks(content: unknown, base: JsonPath, role: BlockRole, textTypes: readonly string[]): RequestBlock[] {
  if (typeof content === "string") return [{ path: [...base, "content"], role, value: content, removable: true }];
  const out: RequestBlock[] = [];
  arr(content).forEach((p, j) => {
    if (isRecord(p) && textTypes.includes(String(p.type)) && typeof p.text === "string") {
      out.push({ path: [...base, "content", j, "text"], role, value: p.text, removable: true });
    } else if (isRecord(p)) out.push({ path: [...base, "content", j], role, value: p, removable: true });
  });
  return out;
}

/** The message roles whose content becomes blocks as they are (chat completions and responses). */
export const CHAT_ROLES: Record<string, BlockRole> = { system: "system", developer: "developer", user: "user" };
