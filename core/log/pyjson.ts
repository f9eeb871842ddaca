/**
 * JSON exactly as the reference (Python) writes it.
 *
 * Runs are byte-compatible with `causeway.event.v1`, whose hashes are sha256 of
 * `json.dumps(x, sort_keys=True, separators=(",", ":"), ensure_ascii=False)` and whose files use
 * the default separators `", "` / `": "`. Three things differ from JavaScript's JSON:
 *  - numbers: Python keeps a float a float (`89.0`, `1e-05`, `1e+16`), integers are unbounded;
 *  - key order: by Unicode code point, not by UTF-16 code unit;
 *  - escapes: only `"` `\` and control characters are escaped, everything else is written raw.
 *
 * Values are plain JSON values plus two markers so nothing is lost on a round trip:
 * {@link PyFloat} for a float whose value is integral (`89.0`) and `bigint` for integers beyond
 * 2^53. {@link parseLossless} produces them; {@link dumps} writes them back.
 */

import { MAX_JSON_DEPTH, jsonTooDeep } from "./safefs";
import { isRecord } from "../util/guards";

/** A float that must be written in float form even though its value is integral (`89.0`). */
export class PyFloat {
  constructor(readonly value: number) {}
  valueOf(): number {
    return this.value;
  }
  toJSON(): number {
    return this.value;
  }
}

/** Marks `x` as a Python float, so `pyFloat(89)` is written `89.0`. */
export function pyFloat(x: number): PyFloat {
  return new PyFloat(x);
}

export type JsonValue = null | boolean | number | string | bigint | PyFloat | JsonValue[] | { [key: string]: JsonValue };

/** Python's `repr(float)`: shortest round-trip digits, exponent form below 1e-4 and from 1e16. */
export function floatRepr(x: number): string {
  if (Number.isNaN(x)) return "NaN";
  if (x === Infinity) return "Infinity";
  if (x === -Infinity) return "-Infinity";
  if (x === 0) return Object.is(x, -0) ? "-0.0" : "0.0";
  const sign = x < 0 ? "-" : "";
  const e = Math.abs(x).toExponential(); // shortest digits that round-trip, e.g. "1.5e+300"
  const at = e.indexOf("e");
  const mantissa = e.slice(0, at);
  const exp = Number(e.slice(at + 1));
  const digits = mantissa.replace(".", "");
  if (exp < -4 || exp >= 16) {
    const m = digits.length > 1 ? digits[0] + "." + digits.slice(1) : digits;
    const ee = Math.abs(exp) < 10 ? "0" + Math.abs(exp) : String(Math.abs(exp));
    return `${sign}${m}e${exp < 0 ? "-" : "+"}${ee}`;
  }
  if (exp < 0) return `${sign}0.${"0".repeat(-exp - 1)}${digits}`;
  if (digits.length <= exp + 1) return `${sign}${digits}${"0".repeat(exp + 1 - digits.length)}.0`;
  return `${sign}${digits.slice(0, exp + 1)}.${digits.slice(exp + 1)}`;
}

/** How a JavaScript number is written: safe integers as digits, anything else as a Python float. */
export function numberRepr(x: number): string {
  if (Number.isSafeInteger(x) && !Object.is(x, -0)) return String(x);
  return floatRepr(x);
}

/**
 * Orders strings by Unicode code point (Python's `sorted`). JavaScript's `<` compares UTF-16 code
 * units, which differs only where a surrogate pair meets a BMP character in U+E000..U+FFFF.
 */
export function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    let x = a.charCodeAt(i);
    let y = b.charCodeAt(i);
    if (x === y) continue;
    if (x >= 0xd800 && y >= 0xd800) {
      x = x >= 0xe000 ? x - 0x800 : x + 0x2000;
      y = y >= 0xe000 ? y - 0x800 : y + 0x2000;
    }
    return x - y;
  }
  return a.length - b.length;
}

const ESC: Record<number, string> = { 0x22: '\\"', 0x5c: "\\\\", 0x0a: "\\n", 0x0d: "\\r", 0x09: "\\t", 0x08: "\\b", 0x0c: "\\f" };
// eslint-disable-next-line no-control-regex
const NEEDS_ESCAPE = /["\\\u0000-\u001f]/;

/** A string literal as `json.dumps(..., ensure_ascii=False)` writes it. Lone surrogates become U+FFFD. */
export function quote(s: string): string {
  if (!s.isWellFormed()) s = s.toWellFormed();
  if (!NEEDS_ESCAPE.test(s)) return '"' + s + '"';
  let out = '"';
  let start = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x20 && c !== 0x22 && c !== 0x5c) continue;
    out += s.slice(start, i) + (ESC[c] ?? "\\u00" + (c < 0x10 ? "0" : "") + c.toString(16));
    start = i + 1;
  }
  return out + s.slice(start) + '"';
}

export type Layout = "canonical" | "file" | "ordered";

/**
 * `json.dumps(value, sort_keys=True, ensure_ascii=False)` with compact separators (`canonical`,
 * what hashes are computed over) or the default ones (`file`, how lines and blobs are written);
 * `ordered` is compact with each object's own key order (a value stored to be read back as it
 * was, not hashed). `undefined` members are skipped (as JSON.stringify does); functions and
 * symbols are refused.
 */
export function dumps(value: unknown, layout: Layout = "canonical"): string {
  // JSON.stringify writes exactly these bytes for most values; check that cheaply, then use it
  if (layout === "canonical" && stringifySafe(value, 0)) return JSON.stringify(value);
  const comma = layout === "file" ? ", " : ",";
  const colon = layout === "file" ? ": " : ":";
  const seen = new Set<object>();
  const write = (v: unknown): string => {
    switch (typeof v) {
      case "string":
        return quote(v);
      case "number":
        return numberRepr(v);
      case "boolean":
        return v ? "true" : "false";
      case "bigint":
        return v.toString();
      case "object": {
        if (v === null) return "null";
        if (v instanceof PyFloat) return floatRepr(v.value);
        if (seen.has(v)) throw new TypeError("cannot serialise a value that contains itself");
        seen.add(v);
        let out: string;
        if (Array.isArray(v)) {
          out = "[" + v.map((x) => (x === undefined ? "null" : write(x))).join(comma) + "]";
        } else if (v instanceof Date) {
          out = quote(v.toISOString());
        } else {
          const obj = v as Record<string, unknown>;
          const keys = Object.keys(obj).filter((k) => obj[k] !== undefined);
          if (layout !== "ordered") keys.sort(compareCodePoints);
          out = "{" + keys.map((k) => quote(k) + colon + write(obj[k])).join(comma) + "}";
        }
        seen.delete(v);
        return out;
      }
      default:
        throw new TypeError(`cannot serialise a ${typeof v} as JSON`);
    }
  };
  return write(value);
}

/**
 * True when JSON.stringify(v) is Python's canonical form of v: keys already in code-point order,
 * numbers that both print alike (safe integers, or non-integers between 1e-4 and 1e16), well-formed
 * strings, no markers, no undefined, and not too deep.
 */
function stringifySafe(v: unknown, depth: number): boolean {
  switch (typeof v) {
    case "string":
      return v.isWellFormed();
    case "boolean":
      return true;
    case "number": {
      if (Number.isSafeInteger(v)) return !Object.is(v, -0);
      const a = Math.abs(v);
      return Number.isFinite(v) && !Number.isInteger(v) && a >= 1e-4 && a < 1e16;
    }
    case "object": {
      if (v === null) return true;
      if (depth > 64) return false;
      if (Array.isArray(v)) {
        for (let i = 0; i < v.length; i++) if (!stringifySafe(v[i], depth + 1)) return false;
        return true;
      }
      const proto = Object.getPrototypeOf(v);
      if (proto !== Object.prototype && proto !== null) return false; // PyFloat, Date, class instances
      let prev: string | undefined;
      for (const k in v as Record<string, unknown>) {
        if (!Object.prototype.hasOwnProperty.call(v, k)) continue;
        if (prev !== undefined && compareCodePoints(prev, k) >= 0) return false;
        if (!k.isWellFormed()) return false;
        const x = (v as Record<string, unknown>)[k];
        if (x === undefined || !stringifySafe(x, depth + 1)) return false;
        prev = k;
      }
      return true;
    }
    default:
      return false;
  }
}

/** Thrown by {@link parseLossless} with the offset where the text stops being JSON. */
export class JsonSyntaxError extends SyntaxError {
  constructor(
    message: string,
    readonly offset: number,
  ) {
    super(`${message} at offset ${offset}`);
  }
}

const MAX_DEPTH = MAX_JSON_DEPTH + 12;

/**
 * Parses JSON (plus Python's `NaN`, `Infinity`, `-Infinity`) keeping what JSON.parse loses:
 * integral floats become {@link PyFloat}, integers beyond 2^53 become `bigint`. Duplicate keys keep
 * the last value, as Python does. Nesting deeper than 512 levels is refused.
 */
export function parseLossless(text: string): JsonValue {
  const p = new LosslessParser(text);
  const v = p.value(0);
  p.ws();
  if (p.i !== text.length) p.fail("trailing characters");
  return v;
}

const NUM = /-?(?:0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/y;

/** The parser of {@link parseLossless}: one function per production, over a shared cursor `i`. */
class LosslessParser {
  i = 0;
  private readonly n: number;

  constructor(private readonly text: string) {
    this.n = text.length;
  }

  ws(): void {
    const { text, n } = this;
    while (this.i < n) {
      const c = text.charCodeAt(this.i);
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) this.i++;
      else break;
    }
  }

  fail(msg: string): never {
    throw new JsonSyntaxError(msg, this.i);
  }

  value(depth: number): JsonValue {
    if (depth > MAX_DEPTH) this.fail("nesting too deep");
    this.ws();
    const { text } = this;
    const c = text[this.i];
    if (c === "{") return this.object(depth);
    if (c === "[") return this.array(depth);
    if (c === '"') return this.string();
    if (text.startsWith("true", this.i)) return ((this.i += 4), true);
    if (text.startsWith("false", this.i)) return ((this.i += 5), false);
    if (text.startsWith("null", this.i)) return ((this.i += 4), null);
    if (text.startsWith("NaN", this.i)) return ((this.i += 3), NaN);
    if (text.startsWith("Infinity", this.i)) return ((this.i += 8), Infinity);
    if (text.startsWith("-Infinity", this.i)) return ((this.i += 9), -Infinity);
    return this.number();
  }

  private object(depth: number): JsonValue {
    const { text } = this;
    this.i++;
    const obj: Record<string, JsonValue> = {};
    this.ws();
    if (text[this.i] === "}") {
      this.i++;
      return obj;
    }
    for (;;) {
      this.ws();
      if (text[this.i] !== '"') this.fail("expected a key");
      const k = this.string();
      this.ws();
      if (text[this.i] !== ":") this.fail("expected ':'");
      this.i++;
      const v = this.value(depth + 1);
      // a "__proto__" key is data like any other (as JSON.parse and Python keep it), never the prototype
      if (k === "__proto__") Object.defineProperty(obj, k, { value: v, enumerable: true, writable: true, configurable: true });
      else obj[k] = v;
      this.ws();
      if (text[this.i] === ",") {
        this.i++;
        continue;
      }
      if (text[this.i] === "}") {
        this.i++;
        return obj;
      }
      this.fail("expected ',' or '}'");
    }
  }

  private array(depth: number): JsonValue {
    const { text } = this;
    this.i++;
    const arr: JsonValue[] = [];
    this.ws();
    if (text[this.i] === "]") {
      this.i++;
      return arr;
    }
    for (;;) {
      arr.push(this.value(depth + 1));
      this.ws();
      if (text[this.i] === ",") {
        this.i++;
        continue;
      }
      if (text[this.i] === "]") {
        this.i++;
        return arr;
      }
      this.fail("expected ',' or ']'");
    }
  }

  private number(): JsonValue {
    NUM.lastIndex = this.i;
    const m = NUM.exec(this.text);
    if (!m || m[0].length === 0) this.fail("unexpected character");
    const tok = m[0];
    this.i += tok.length;
    if (m[1] === undefined && m[2] === undefined) {
      const x = Number(tok);
      if (Number.isSafeInteger(x)) return Object.is(x, -0) ? 0 : x;
      return BigInt(tok);
    }
    const x = Number(tok);
    return Number.isInteger(x) ? new PyFloat(x) : x;
  }

  private string(): string {
    const { text, n } = this;
    this.i++; // opening quote
    let out = "";
    let start = this.i;
    for (;;) {
      if (this.i >= n) this.fail("unterminated string");
      const c = text.charCodeAt(this.i);
      if (c === 0x22) {
        out += text.slice(start, this.i);
        this.i++;
        return out;
      }
      if (c === 0x5c) {
        out += text.slice(start, this.i);
        out += this.escape();
        start = this.i;
        continue;
      }
      if (c < 0x20) this.fail("control character in string");
      this.i++;
    }
  }

  /** The escape at the cursor (a backslash and what follows), as the text it stands for. */
  private escape(): string {
    const e = this.text[this.i + 1];
    this.i += 2;
    switch (e) {
      case '"':
        return '"';
      case "\\":
        return "\\";
      case "/":
        return "/";
      case "b":
        return "\b";
      case "f":
        return "\f";
      case "n":
        return "\n";
      case "r":
        return "\r";
      case "t":
        return "\t";
      case "u": {
        const h = this.text.slice(this.i, this.i + 4);
        if (!/^[0-9a-fA-F]{4}$/.test(h)) this.fail("bad \\u escape");
        this.i += 4;
        return String.fromCharCode(parseInt(h, 16));
      }
      default:
        return this.fail("bad escape");
    }
  }
}

/** Drops the lossless markers: PyFloat → number, bigint → number (nearest). */
export function toPlain(v: JsonValue): unknown {
  if (v instanceof PyFloat) return v.value;
  if (typeof v === "bigint") return Number(v);
  if (Array.isArray(v)) return v.map(toPlain);
  if (v && typeof v === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) out[k] = toPlain(x);
    return out;
  }
  return v;
}

/** A JSON object (Python's NaN / Infinity accepted), as plain values; undefined for anything else. */
export function parseJsonObject(text: string): Record<string, unknown> | undefined {
  if (jsonTooDeep(text, MAX_JSON_DEPTH)) return undefined; // every later walk over it is bounded
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    try {
      v = toPlain(parseLossless(text));
    } catch {
      return undefined;
    }
  }
  return v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
}

/** A JSON object of a losslessly parsed document: a record of named fields that is not a PyFloat. */
export function isJsonObject(x: unknown): x is Record<string, JsonValue> {
  return isRecord(x) && !(x instanceof PyFloat);
}
