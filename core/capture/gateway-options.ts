/** What the recording gateway (gateway.ts) is started with, and the part of it its runs (gateway-runs.ts) take. */
import type { Redactor } from "../log/redact";
import type { PrincipalLimits } from "./limits";

/** Besides the options below, the limits per address and per API key ({@link PrincipalLimits}). */
export interface GatewayOptions extends Partial<PrincipalLimits> {
  /** Where requests go: http(s)://host[:port][/base]. The request's own path is appended. */
  upstream: string;
  /** Runs root. */
  outDir: string;
  /** Default 7789; 0 picks a free port. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** The run for requests without x-causeway-run (default gateway-<time>); later runs after a gap get a free id from it. */
  runId?: string;
  sensitiveTools?: readonly string[];
  /** Tools whose results are untrusted (every tool not trusted is: kept for the command line's --untrusted-tool). */
  untrustedTools?: readonly string[];
  /** Tools whose results are trusted (default none: tool results are untrusted). */
  trustedTools?: readonly string[];
  /** A request without x-causeway-run after this long with no call in flight starts a new run (default 120 s; 0: never). */
  runGapMs?: number;
  /** One run for every request, x-causeway-run ignored and no gap (the built-in gateway of `causeway record`). */
  singleRun?: boolean;
  /** run.start's program (the recorded command line), extra meta, and the program's root. */
  program?: string;
  meta?: Record<string, unknown>;
  root?: string;
  /** run.start's seed (default 0). */
  seed?: number;
  /** Where requests an Anthropic client sends (an `anthropic-version` header) go (default: `upstream`). */
  anthropicUpstream?: string;
  /** Take only requests under this path (e.g. "/s-<random>"), which is removed before forwarding. */
  pathPrefix?: string;
  /** The clock the run gap is measured on (default Date.now). */
  now?: () => number;
  /** label → API key: requests with this key are recorded as agent `label`. */
  agentKeys?: Record<string, string>;
  /** Largest request or response body recorded (default 32 MB; larger requests are refused). */
  maxBodyBytes?: number;
  /** The upstream must accept the connection within this (default 10 s); else 504. */
  connectTimeoutMs?: number;
  /** The upstream may stay silent (before its answer or between two chunks of it) this long (default 100 s); else 504. */
  idleTimeoutMs?: number;
  /** One line per recorded call (default: nothing). */
  log?: (line: string) => void;
  /** Browser origins whose requests are taken (default none: any request with an `Origin` is refused with 403). */
  allowOrigins?: readonly string[];
  /** A connection must send a request's headers within this (default 10 s). */
  headerTimeoutMs?: number;
  /** ... and its body within this once the headers are in (default 120 s). */
  bodyTimeoutMs?: number;
  /** Most open connections (default 256). */
  maxConnections?: number;
}

/** What the gateway's runs are made with: the run options of {@link GatewayOptions}, and the redactor every run shares. */
export type GatewayRunOptions = Pick<
  GatewayOptions,
  "outDir" | "runId" | "sensitiveTools" | "untrustedTools" | "trustedTools" | "runGapMs" | "singleRun" | "program" | "meta" | "root" | "seed" | "now"
> & { redactor: Redactor };
