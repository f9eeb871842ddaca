/**
 * Credentials never reach disk: the one place where what a recording writes is cleaned of them.
 *
 * A {@link Redactor} holds the secrets one recording knows of — the values of credential-looking
 * environment variables (taken when it is made) and those the capture layers hand it as they see
 * them: the request's own credential headers (`authorization`, `x-api-key`, `cookie`…, the secret
 * part after `Bearer `), credential query parameters (`?key=`, `api_key`, `token`, `sig`…), a
 * client's API key. The runtime passes every blob (before it is hashed, so refs stay true) and
 * every event's fields through it; the gateway its log lines. Each occurrence of a secret becomes
 * `[redacted]`, visibly, as does a secret's start left at the end of a text cut short; and in any
 * text, the value of a credential query parameter (`…?key=X&…`) becomes `[redacted]` even when
 * the secret itself was never seen.
 */

export const REDACTED = "[redacted]";

/** Shorter values are not treated as secrets (replacing them would mangle ordinary text). */
export const MIN_SECRET_LENGTH = 8;

/** A secret's first characters at the very end of a text (cut short by a slice) are redacted from this many on. */
const MIN_TAIL = 6;

const CREDENTIAL_WORD = "(?:key|apikey|token|secret|signature|sig|password|passwd|pwd|auth|authorization|credential|credentials|session)";

/**
 * Query parameter names that carry credentials: key, api-key, api_key, apikey, token,
 * access_token, auth, sig, signature, x-amz-signature, x-amz-security-token, client_secret…
 * (case-insensitive; `-` and `_` alike; a credential word alone or as the last part of the name).
 */
const CREDENTIAL_PARAM = new RegExp(`^(?:[a-z0-9]+[-_.])*${CREDENTIAL_WORD}$`, "i");

export function isCredentialParam(name: string): boolean {
  return CREDENTIAL_PARAM.test(name) || /^x-amz-credential$|^x-goog-credential$|^code_verifier$/i.test(name);
}

/** Request header names whose values are credentials. */
const CREDENTIAL_HEADER =
  /^(?:authorization|proxy-authorization|cookie|x-api-key|api-key|x-goog-api-key|x-auth-token|x-amz-security-token|x-ms-token-aad-access-token|ocp-apim-subscription-key)$|(?:^|-)(?:key|token|secret|auth|password|credential|signature|cookie)$/i;

export function isCredentialHeader(name: string): boolean {
  return CREDENTIAL_HEADER.test(name);
}

/** Environment variable names that hold credentials. */
const CREDENTIAL_ENV = /KEY|TOKEN|SECRET|PASSWORD|PASS|CREDENTIAL|AUTH/i;

/**
 * Whether an environment value is long and random enough to be a secret: at least 8 characters,
 * not a path, a number or a plain URL, and either 20 characters long or mixing letters with
 * digits or cases (so `AUTH_PROVIDER=anthropic` does not redact every "anthropic").
 */
function secretLooking(v: string): boolean {
  if (v.length < MIN_SECRET_LENGTH || v.length > 4096) return false;
  if (/^(?:[/~.]|[A-Za-z]:[\\/])/.test(v) || /^[\d.,:-]+$/.test(v) || /^(?:true|false|yes|no|on|off|null)$/i.test(v)) return false;
  if (/^[a-z][a-z0-9+.-]*:\/\/[^@\s]*$/i.test(v) && !/[?&][^=&]+=/.test(v)) return false;
  if (v.length >= 20) return true;
  return /\d/.test(v) ? /[A-Za-z]/.test(v) : /[a-z]/.test(v) && /[A-Z]/.test(v);
}

/** The values of credential-looking environment variables. */
export function envSecrets(env: NodeJS.ProcessEnv = process.env): string[] {
  const out: string[] = [];
  for (const [name, v] of Object.entries(env)) if (typeof v === "string" && CREDENTIAL_ENV.test(name) && secretLooking(v)) out.push(v);
  return out;
}

/** The secret parts of one credential header value: after an auth scheme (`Bearer X` → X, so `Bearer [redacted]` shows), each cookie's value, a Basic password. */
export function headerSecrets(name: string, value: string): string[] {
  const v = value.trim();
  if (/^cookie$/i.test(name)) {
    return v
      .split(";")
      .map((c) => c.slice(c.indexOf("=") + 1).trim())
      .filter(Boolean);
  }
  const m = /^([A-Za-z][A-Za-z0-9_-]*)\s+(\S.*)$/.exec(v);
  if (!m) return [v];
  const out = [m[2]];
  if (/^basic$/i.test(m[1])) {
    const plain = Buffer.from(m[2], "base64").toString("utf8");
    const colon = plain.indexOf(":");
    if (colon >= 0) out.push(plain.slice(colon + 1), plain);
  }
  return out;
}

const NAME_CHAR = /[A-Za-z0-9_.%-]/;
const VALUE_END = /[&#\s"'<>\\]/;

/** A URL (or any text holding one) with the value of each credential query parameter replaced by `[redacted]`. */
export function redactQuery(text: string): string {
  let eq = text.indexOf("=");
  if (eq < 0) return text;
  let out = "";
  let from = 0;
  for (; eq >= 0; eq = text.indexOf("=", eq + 1)) {
    // the name before this '=' must follow a '?', '&' or ';'
    let j = eq;
    while (j > 0 && eq - j < 64 && NAME_CHAR.test(text[j - 1])) j--;
    if (j === eq || j === 0 || !"?&;".includes(text[j - 1])) continue;
    let name = text.slice(j, eq);
    try {
      name = decodeURIComponent(name);
    } catch {
      /* the name as written */
    }
    if (!isCredentialParam(name)) continue;
    let k = eq + 1;
    while (k < text.length && !VALUE_END.test(text[k])) k++;
    const value = text.slice(eq + 1, k);
    if (!value || value === REDACTED || value === encodeURIComponent(REDACTED)) continue;
    out += text.slice(from, eq + 1) + REDACTED;
    from = k;
    eq = k - 1;
  }
  return from === 0 ? text : out + text.slice(from);
}

/** The values of a URL's credential query parameters (as written and decoded). */
export function querySecrets(url: string): string[] {
  const out: string[] = [];
  const q = url.indexOf("?");
  if (q < 0) return out;
  for (const part of url
    .slice(q + 1)
    .split("#")[0]
    .split(/[&;]/)) {
    const eq = part.indexOf("=");
    if (eq <= 0) continue;
    let name = part.slice(0, eq);
    let value = part.slice(eq + 1);
    const raw = value;
    try {
      name = decodeURIComponent(name.replace(/\+/g, " "));
      value = decodeURIComponent(value.replace(/\+/g, " "));
    } catch {
      /* as written */
    }
    if (isCredentialParam(name)) out.push(raw, value);
  }
  return out;
}

const REF_LIKE = /^(?:sha256:)?[0-9a-f]{32,64}$/;

/** The secrets of one recording, and the cleaning of what it writes. */
export class Redactor {
  /** Longest first, so a secret that holds another is replaced whole. */
  private secrets: string[] = [];
  private readonly known = new Set<string>();

  constructor(secrets: Iterable<string> = []) {
    for (const s of secrets) this.add(s);
  }

  /** A redactor that knows the credential-looking values of an environment. */
  static fromEnv(env: NodeJS.ProcessEnv = process.env): Redactor {
    return new Redactor(envSecrets(env));
  }

  /** Adds a secret (values shorter than {@link MIN_SECRET_LENGTH} are ignored). */
  add(secret: unknown): void {
    if (typeof secret !== "string") return;
    const s = secret.trim();
    if (s.length < MIN_SECRET_LENGTH || s === REDACTED || this.known.has(s)) return;
    this.known.add(s);
    this.secrets = [...this.known].sort((a, b) => b.length - a.length);
  }

  /** Adds the secrets of a request's credential headers (a Headers object, [name, value] pairs or a plain object). */
  addHeaders(headers: unknown): void {
    for (const [name, value] of headerPairs(headers)) if (isCredentialHeader(name)) for (const s of headerSecrets(name, value)) this.add(s);
  }

  /** Adds the values of a URL's credential query parameters. */
  addUrl(url: unknown): void {
    if (typeof url === "string") for (const s of querySecrets(url)) this.add(s);
  }

  /** Adds the credentials an SDK client holds: its API key or token, its base URL's and default query's credential parameters, its default credential headers. */
  addClient(client: unknown): void {
    if (!client || typeof client !== "object") return;
    try {
      const c = client as { apiKey?: unknown; authToken?: unknown; baseURL?: unknown; _options?: { defaultQuery?: unknown; defaultHeaders?: unknown } };
      this.add(c.apiKey);
      this.add(c.authToken);
      this.addUrl(c.baseURL);
      const q = c._options?.defaultQuery;
      if (q && typeof q === "object") for (const [k, v] of Object.entries(q)) if (isCredentialParam(k)) this.add(String(v));
      this.addHeaders(c._options?.defaultHeaders);
    } catch {
      /* a client whose fields can't be read */
    }
  }

  get size(): number {
    return this.secrets.length;
  }

  /** A text with every known secret, a secret's start at its end, and every credential query value replaced by `[redacted]`. */
  text(s: string): string {
    let out = s;
    if (out.length >= MIN_TAIL && this.secrets.length) {
      for (const secret of this.secrets) if (out.includes(secret)) out = out.split(secret).join(REDACTED);
      out = this.tail(out);
    }
    return redactQuery(out);
  }

  /**
   * A value with every string in it (keys too) passed through {@link text}. Returns the value itself
   * when nothing changed, else a copy of the parts that did (the value is never modified).
   */
  value<T>(v: T): T {
    return this.walk(v, 0) as T;
  }

  private walk(v: unknown, depth: number): unknown {
    if (typeof v === "string") return REF_LIKE.test(v) ? (this.known.has(v) ? REDACTED : v) : this.text(v);
    if (!v || typeof v !== "object" || depth > 512) return v;
    if (Array.isArray(v)) {
      let copy: unknown[] | undefined;
      for (let i = 0; i < v.length; i++) {
        const x = this.walk(v[i], depth + 1);
        if (x !== v[i]) (copy ??= v.slice())[i] = x;
      }
      return copy ?? v;
    }
    const proto = Object.getPrototypeOf(v);
    if (proto !== Object.prototype && proto !== null) return v;
    const entries = Object.entries(v as Record<string, unknown>);
    let changed = false;
    const next = entries.map(([k, x]): [string, unknown] => {
      const k2 = this.text(k);
      const x2 = this.walk(x, depth + 1);
      if (k2 !== k || x2 !== x) changed = true;
      return [k2, x2];
    });
    return changed ? Object.fromEntries(next) : v;
  }

  /** A secret's first characters at the very end of a text (a body cut at 300 or 500 characters). */
  private tail(s: string): string {
    for (const secret of this.secrets) {
      const from = Math.max(0, s.length - secret.length + 1);
      const head = secret.slice(0, MIN_TAIL);
      for (let i = s.indexOf(head, from); i >= 0; i = s.indexOf(head, i + 1)) {
        if (secret.startsWith(s.slice(i))) return s.slice(0, i) + REDACTED;
      }
    }
    return s;
  }
}

/** [name, value] pairs of headers given in any of the forms clients use. */
function headerPairs(h: unknown): [string, string][] {
  const out: [string, string][] = [];
  if (!h || typeof h !== "object") return out;
  try {
    if (typeof (h as Headers).forEach === "function" && typeof (h as Headers).get === "function") {
      (h as Headers).forEach((value, name) => out.push([name, value]));
      return out;
    }
    if (Array.isArray(h)) {
      for (const x of h) {
        if (Array.isArray(x) && x.length === 2 && typeof x[0] === "string") out.push([x[0], String(x[1])]);
        else out.push(...headerPairs(x));
      }
      return out;
    }
    for (const [k, v] of Object.entries(h as Record<string, unknown>)) {
      if (typeof v === "string") out.push([k, v]);
      else if (Array.isArray(v)) for (const x of v) if (typeof x === "string") out.push([k, x]);
    }
    // openai's buildHeaders keeps its values in a nested Headers
    const values = (h as { values?: unknown }).values;
    if (values && typeof values === "object") out.push(...headerPairs(values));
  } catch {
    /* unreadable headers */
  }
  return out;
}
