/**
 * Limits of a server that faces untrusted clients, shared by the collector and the gateway: header
 * and body timeouts, a minimum body data rate, the connection cap with room made by closing the
 * clients that waited longest, connections per remote address, requests and live tails per
 * principal (the token a request carries), and slots held back for the health check.
 *
 * The table of open connections can only be held by requests that are being answered: a connection
 * waiting for headers, and one still sending its body, is closed to make room for a new one (the
 * one that waited longest first), and a body that trickles below `minBodyBytesPerSec` over a window
 * of `bodyRateWindowMs` is cut with 408. Requests being answered (a tail, a call upstream) hold at
 * most `maxConnections - reservedConnections` slots, so /healthz always finds one.
 */
import type http from "node:http";
import type { Socket } from "node:net";
import { createHash } from "node:crypto";
import { performance } from "node:perf_hooks";

/** Timeouts and the connection cap of a server that faces untrusted clients. */
export interface ConnectionLimits {
  /** A connection must send a request's complete headers within this (from connecting, or from its last answer). */
  headerTimeoutMs: number;
  /** ... and then its complete body within this. */
  bodyTimeoutMs: number;
  /** Most open connections; past it, the connection that waited longest for headers (else for its body) is closed, else the new one. */
  maxConnections: number;
}

/** The limits beyond the timeouts and the cap, each an option of `startCollector` and `startGateway` (see {@link LIMIT_DEFAULTS}). */
export interface PrincipalLimits {
  /** Most open connections from one remote address. */
  maxConnectionsPerAddress: number;
  /** Most requests of one principal (token) received or answered at once; past it, 429. */
  maxRequestsPerPrincipal: number;
  /** Most live tails of one principal at once; past it, 429. */
  maxTailsPerPrincipal: number;
  /** A body must arrive at least this fast (bytes per second, over each window) or it is cut with 408. */
  minBodyBytesPerSec: number;
  /** The window the body rate is measured over. */
  bodyRateWindowMs: number;
  /** Slots requests being answered may never take: the health check always finds one. */
  reservedConnections: number;
}

export type ServerLimits = ConnectionLimits & PrincipalLimits;

/**
 * Defaults no real client meets: a body of 10 KB in 10 s is slower than any link a person uses
 * (Apache's mod_reqtimeout asks for 500 bytes/s), one address or token holding half the table at
 * once is far above what an agent, a team's pushers or an investigator's tails do.
 */
export const LIMIT_DEFAULTS = {
  maxConnectionsPerAddress: 128,
  maxRequestsPerPrincipal: 128,
  maxTailsPerPrincipal: 32,
  minBodyBytesPerSec: 1024,
  bodyRateWindowMs: 10_000,
  reservedConnections: 4,
} as const;

/** The limits with every option not given filled from the defaults, checked (a wrong option is an error). */
export function resolveLimits(base: ConnectionLimits, opts: Partial<PrincipalLimits> = {}): ServerLimits {
  const int = (name: keyof PrincipalLimits, v: number | undefined, dflt: number, min: number, max: number): number => {
    if (v === undefined) return dflt;
    if (!Number.isSafeInteger(v) || v < min || v > max) throw new Error(`${name} must be a whole number from ${min} to ${max}, got ${v}`);
    return v;
  };
  const max = base.maxConnections;
  const reserveDefault = max < 2 ? 0 : Math.max(1, Math.min(LIMIT_DEFAULTS.reservedConnections, Math.floor(max / 4)));
  return {
    ...base,
    maxConnectionsPerAddress: int(
      "maxConnectionsPerAddress",
      opts.maxConnectionsPerAddress,
      Math.min(max, LIMIT_DEFAULTS.maxConnectionsPerAddress),
      1,
      1 << 16,
    ),
    maxRequestsPerPrincipal: int("maxRequestsPerPrincipal", opts.maxRequestsPerPrincipal, Math.min(max, LIMIT_DEFAULTS.maxRequestsPerPrincipal), 1, 1 << 16),
    maxTailsPerPrincipal: int("maxTailsPerPrincipal", opts.maxTailsPerPrincipal, LIMIT_DEFAULTS.maxTailsPerPrincipal, 1, 1 << 16),
    minBodyBytesPerSec: int("minBodyBytesPerSec", opts.minBodyBytesPerSec, LIMIT_DEFAULTS.minBodyBytesPerSec, 0, 1 << 30),
    bodyRateWindowMs: int("bodyRateWindowMs", opts.bodyRateWindowMs, LIMIT_DEFAULTS.bodyRateWindowMs, 1, 3_600_000),
    reservedConnections: int("reservedConnections", opts.reservedConnections, reserveDefault, 0, Math.max(0, max - 1)),
  };
}

/**
 * The key a request's limits are counted under: a digest of the credential it carries (a bearer
 * token, else an `x-api-key`), never the credential itself; undefined without one. The one place
 * to swap for a token's principal id.
 */
export function principalKey(req: http.IncomingMessage): string | undefined {
  const m = /^Bearer\s+(.+)$/i.exec(req.headers.authorization ?? "");
  const apiKey = req.headers["x-api-key"];
  const secret = m ? m[1].trim() : typeof apiKey === "string" ? apiKey : "";
  return secret ? `t:${createHash("sha256").update(secret).digest("hex").slice(0, 32)}` : undefined;
}

/** A connection this new is closed to make room only when no older one can be. */
const NEW_CONNECTION_GRACE_MS = 1000;

type State = "waiting" | "body" | "answering";

interface Conn {
  socket: Socket;
  address: string;
  state: State;
  /** When the state began (an order, not a time): the longest waiting is closed first. */
  since: number;
  /** When the state began (ms, performance.now). */
  at: number;
  /** The request in progress. */
  req?: http.IncomingMessage;
  /** The principal of the request in progress (counted in `perKey`). */
  key?: string;
  timer?: NodeJS.Timeout;
  rateTimer?: NodeJS.Timeout;
}

/** What {@link ConnectionGuard.admit} needs to know of a request. */
export interface Admission {
  /** The request's principal ({@link principalKey}, or a token's id). */
  key?: string;
  /** The health check: never refused for want of room. */
  health?: boolean;
}

/**
 * Enforces {@link ServerLimits} on a server with its own timers (Node's headersTimeout is only
 * checked every 30 s, and never for a connection that has not sent a byte). Call {@link admit}
 * first thing in the request handler, and {@link openTail} before starting a live tail.
 */
export class ConnectionGuard {
  private readonly open = new Map<Socket, Conn>();
  private readonly perAddress = new Map<string, number>();
  private readonly perKey = new Map<string, number>();
  private readonly tails = new Map<string, number>();
  private order = 0;

  constructor(
    server: http.Server,
    readonly limits: ServerLimits,
  ) {
    server.on("connection", (socket: Socket) => this.connected(socket));
    server.headersTimeout = limits.headerTimeoutMs;
    server.requestTimeout = limits.headerTimeoutMs + limits.bodyTimeoutMs;
    // an idle keep-alive connection is closed by the header timer: say so in Keep-Alive, so a
    // client stops reusing it first (with Node's default of 5 s, fetch reused connections the
    // timer had just closed, and a pull under load failed with "fetch failed")
    server.keepAliveTimeout = limits.headerTimeoutMs;
  }

  /** Open connections (for tests and logs). */
  get connections(): number {
    return this.open.size;
  }

  private bump(map: Map<string, number>, k: string, by: number): number {
    const n = (map.get(k) ?? 0) + by;
    if (n > 0) map.set(k, n);
    else map.delete(k);
    return n;
  }

  private setState(c: Conn, state: State): void {
    c.state = state;
    c.since = ++this.order;
    c.at = performance.now();
  }

  private clearTimers(c: Conn): void {
    if (c.timer) clearTimeout(c.timer);
    if (c.rateTimer) clearTimeout(c.rateTimer);
    c.timer = c.rateTimer = undefined;
  }

  private releaseKey(c: Conn): void {
    if (c.key !== undefined) this.bump(this.perKey, c.key, -1);
    c.key = undefined;
  }

  /** Answers 408 on the raw socket (no response has started) and closes it. */
  private expire(c: Conn): void {
    try {
      if (c.socket.writable) c.socket.write("HTTP/1.1 408 Request Timeout\r\nconnection: close\r\ncontent-length: 0\r\n\r\n");
    } catch {
      /* closing anyway */
    }
    c.socket.destroy();
  }

  private waitForHeaders(c: Conn): void {
    this.clearTimers(c);
    this.setState(c, "waiting");
    c.timer = setTimeout(() => this.expire(c), this.limits.headerTimeoutMs);
    c.timer.unref();
  }

  /**
   * Closes one connection among those `pick` allows: the one that has waited longest for its
   * headers (past a short grace, so a client that just connected gets to send them), else the one
   * that has waited longest for its body, else the oldest just connected; false if there is none.
   */
  private makeRoom(pick: (c: Conn) => boolean): boolean {
    const grace = Math.min(NEW_CONNECTION_GRACE_MS, this.limits.headerTimeoutMs / 2);
    const now = performance.now();
    const tiers: ((c: Conn) => boolean)[] = [(c) => c.state === "waiting" && now - c.at >= grace, (c) => c.state === "body", (c) => c.state === "waiting"];
    let victim: Conn | undefined;
    for (const tier of tiers) {
      for (const c of this.open.values()) if (tier(c) && pick(c) && (!victim || c.since < victim.since)) victim = c;
      if (victim) break;
    }
    if (!victim) return false;
    this.drop(victim);
    victim.socket.destroy();
    return true;
  }

  private drop(c: Conn): void {
    if (!this.open.delete(c.socket)) return;
    this.clearTimers(c);
    this.releaseKey(c);
    this.bump(this.perAddress, c.address, -1);
  }

  private connected(socket: Socket): void {
    const address = socket.remoteAddress ?? "";
    if ((this.perAddress.get(address) ?? 0) >= this.limits.maxConnectionsPerAddress && !this.makeRoom((c) => c.address === address))
      return void socket.destroy();
    if (this.open.size >= this.limits.maxConnections && !this.makeRoom(() => true)) return void socket.destroy();
    const c: Conn = { socket, address, state: "waiting", since: 0, at: 0 };
    this.open.set(socket, c);
    this.bump(this.perAddress, address, 1);
    this.waitForHeaders(c);
    socket.once("close", () => this.drop(c));
  }

  /** Answers a request the guard refuses, and closes its connection after the answer. */
  private refuse(res: http.ServerResponse, status: number, message: string): false {
    const data = Buffer.from(JSON.stringify({ error: message }));
    res.shouldKeepAlive = false;
    res.writeHead(status, {
      "content-type": "application/json; charset=utf-8",
      "content-length": String(data.length),
      "retry-after": "1",
      connection: "close",
      "cache-control": "no-store",
    });
    res.end(data);
    return false;
  }

  /**
   * Counts a request whose headers are in, and starts the clocks of its body. False when it is
   * refused (429 for a principal over its share, 503 when every slot is being answered); the
   * answer has then been sent.
   */
  admit(req: http.IncomingMessage, res: http.ServerResponse, a: Admission = {}): boolean {
    const c = this.open.get(req.socket);
    if (!c) return true;
    this.clearTimers(c);
    this.setState(c, "answering");
    c.req = req;
    res.once("finish", () => {
      if (this.open.has(c.socket) && !c.socket.destroyed) {
        this.releaseKey(c);
        this.waitForHeaders(c);
      }
    });
    if (!a.health) {
      if (a.key !== undefined && (this.perKey.get(a.key) ?? 0) >= this.limits.maxRequestsPerPrincipal) {
        return this.refuse(res, 429, `too many requests at once for this token (at most ${this.limits.maxRequestsPerPrincipal}); retry later`);
      }
      const busy = () => [...this.open.values()].filter((o) => o !== c && o.state !== "waiting").length;
      const room = this.limits.maxConnections - this.limits.reservedConnections;
      if (busy() >= room && !this.makeRoom((o) => o !== c && o.state === "body")) {
        return this.refuse(res, 503, "the server is busy; retry later");
      }
    }
    if (a.key !== undefined) {
      c.key = a.key;
      this.bump(this.perKey, a.key, 1);
    }
    if (req.complete) return true;
    // the headers are in: now the body must come within its time, and never slower than the minimum rate.
    // A request is complete once its body is in, read or not ('end' only comes when it is read: a
    // tail never reads its empty body); a request without a body is complete right after this event.
    this.setState(c, "body");
    const received = () => {
      if (c.req !== req || c.state !== "body" || !req.complete) return false;
      this.clearTimers(c);
      this.setState(c, "answering");
      return true;
    };
    setImmediate(received);
    c.timer = setTimeout(() => received() || this.expire(c), this.limits.bodyTimeoutMs);
    c.timer.unref();
    const { minBodyBytesPerSec: rate, bodyRateWindowMs: windowMs } = this.limits;
    if (rate > 0) {
      const need = Math.ceil((rate * windowMs) / 1000);
      let last = c.socket.bytesRead;
      const check = () => {
        const got = c.socket.bytesRead - last;
        last = c.socket.bytesRead;
        if (c.req !== req || c.state !== "body" || received()) return;
        if (got < need) return this.expire(c);
        c.rateTimer = setTimeout(check, windowMs);
        c.rateTimer.unref();
      };
      c.rateTimer = setTimeout(check, windowMs);
      c.rateTimer.unref();
    }
    req.once("end", received);
    return true;
  }

  /** Counts a live tail of `key` until its answer closes; false (a 429 has been sent) when the principal holds its most. */
  openTail(key: string | undefined, res: http.ServerResponse): boolean {
    if (key === undefined) return true;
    if ((this.tails.get(key) ?? 0) >= this.limits.maxTailsPerPrincipal) {
      return this.refuse(res, 429, `too many live tails for this token (at most ${this.limits.maxTailsPerPrincipal}); close one first`);
    }
    this.bump(this.tails, key, 1);
    res.once("close", () => this.bump(this.tails, key, -1));
    return true;
  }
}
