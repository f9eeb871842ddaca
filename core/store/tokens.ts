/**
 * Scoped collector tokens: `ingest` (POST /v1/ingest, push, append a test result), `read` (list
 * runs, read events and blobs, tail) and `admin` (everything). The collector's single token of
 * old (`--token` / `$CAUSEWAY_TOKEN`) holds every scope.
 */
import { createHash, timingSafeEqual } from "node:crypto";

export type Scope = "ingest" | "read" | "admin";
export const SCOPES: readonly Scope[] = ["ingest", "read", "admin"];

export interface ScopedToken {
  token: string;
  scopes: readonly Scope[];
}

export class TokenSet {
  private readonly digests: { digest: Buffer; scopes: Set<Scope> }[];
  constructor(tokens: readonly ScopedToken[]) {
    if (!tokens.length || tokens.some((t) => !t.token)) throw new Error("the collector needs a token");
    this.digests = tokens.map((t) => ({ digest: createHash("sha256").update(t.token).digest(), scopes: new Set(t.scopes) }));
  }

  /** The scopes the request's bearer token holds (none for a missing or unknown token). */
  scopesOf(authorization: string | undefined): Set<Scope> {
    const m = /^Bearer\s+(.+)$/i.exec(authorization ?? "");
    if (!m) return new Set();
    const d = createHash("sha256").update(m[1].trim()).digest();
    let found: Set<Scope> | undefined;
    for (const t of this.digests) if (timingSafeEqual(d, t.digest)) found ??= t.scopes; // compare with all: no early exit
    return found ?? new Set();
  }

  allows(authorization: string | undefined, scope: Scope): boolean {
    const s = this.scopesOf(authorization);
    return s.has(scope) || s.has("admin");
  }
}

/** Parses "read,ingest" into scopes. */
export function parseScopes(text: string): Scope[] {
  const out: Scope[] = [];
  for (const s of text.split(/[,+]/).map((x) => x.trim()).filter(Boolean)) {
    if (!(SCOPES as readonly string[]).includes(s)) throw new Error(`unknown token scope ${JSON.stringify(s)} (scopes: ${SCOPES.join(", ")})`);
    out.push(s as Scope);
  }
  if (!out.length) throw new Error("a token needs at least one scope");
  return out;
}
