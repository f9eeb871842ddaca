/**
 * Scoped collector tokens: `ingest` (POST /v1/ingest, push, append a test result), `read` (list
 * runs, read events and blobs, tail) and `admin` (everything). The collector's single token of
 * old (`--token` / `$CAUSEWAY_TOKEN`) holds every scope.
 *
 * Each token is a principal (who a run and a test result belong to, core/store/owners.ts). Its id
 * is the name the operator gives (`principal`), else `token:` and 24 hex digits of a
 * domain-separated SHA-256 of the token: never the token itself, and the same on every collector
 * holding that token and across restarts. (A digest of a guessable token can be guessed back:
 * use random tokens, or name the principals.)
 */
import { createHash, timingSafeEqual } from "node:crypto";
import { LOCAL_WRITER } from "../log/writers";

export type Scope = "ingest" | "read" | "jobs" | "admin";
/** `jobs`: may submit investigations to the collector's workers (core/jobs/api.ts). */
export const SCOPES: readonly Scope[] = ["ingest", "read", "jobs", "admin"];

export interface ScopedToken {
  token: string;
  scopes: readonly Scope[];
  /** The principal's name (letters, digits, . _ @ -; at most 64), else one derived from the token. */
  principal?: string;
}

/** A name an operator may give a principal: no ":" (derived ids hold one), never `local`. */
const NAME_RE = /^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$/;

/** The principal id of a token: its given name, else `token:` + a digest of the token. */
export function principalId(token: string, name?: string): string {
  if (name !== undefined) {
    if (!NAME_RE.test(name) || name === LOCAL_WRITER)
      throw new Error(`a principal's name is 1–64 letters, digits, . _ @ or -, and not "${LOCAL_WRITER}" (got ${JSON.stringify(name.slice(0, 80))})`);
    return name;
  }
  return "token:" + createHash("sha256").update("causeway.principal.v1\0").update(token).digest("hex").slice(0, 24);
}

export class TokenSet {
  private readonly digests: { digest: Buffer; scopes: Set<Scope>; principal: string }[];
  constructor(tokens: readonly ScopedToken[]) {
    if (!tokens.length || tokens.some((t) => !t.token)) throw new Error("the collector needs a token");
    this.digests = tokens.map((t) => ({
      digest: createHash("sha256").update(t.token).digest(),
      scopes: new Set(t.scopes),
      principal: principalId(t.token, t.principal),
    }));
  }

  /** The principal and scopes of the request's bearer token (undefined for a missing or unknown token). */
  principalOf(authorization: string | undefined): { principal: string; scopes: Set<Scope> } | undefined {
    const m = /^Bearer\s+(.+)$/i.exec(authorization ?? "");
    if (!m) return undefined;
    const d = createHash("sha256").update(m[1].trim()).digest();
    let found: { principal: string; scopes: Set<Scope> } | undefined;
    for (const t of this.digests) if (timingSafeEqual(d, t.digest)) found ??= t; // compare with all: no early exit
    return found && { principal: found.principal, scopes: found.scopes };
  }

  /** The scopes the request's bearer token holds (none for a missing or unknown token). */
  scopesOf(authorization: string | undefined): Set<Scope> {
    return this.principalOf(authorization)?.scopes ?? new Set();
  }

  allows(authorization: string | undefined, scope: Scope): boolean {
    const s = this.scopesOf(authorization);
    return s.has(scope) || s.has("admin");
  }
}

/** Parses "read,ingest" into scopes. */
export function parseScopes(text: string): Scope[] {
  const out: Scope[] = [];
  for (const s of text
    .split(/[,+]/)
    .map((x) => x.trim())
    .filter(Boolean)) {
    if (!(SCOPES as readonly string[]).includes(s)) throw new Error(`unknown token scope ${JSON.stringify(s)} (scopes: ${SCOPES.join(", ")})`);
    out.push(s as Scope);
  }
  if (!out.length) throw new Error("a token needs at least one scope");
  return out;
}
