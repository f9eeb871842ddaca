/**
 * Recording one exchange that went through the gateway: the agent it is named for, the decision
 * written to its run (core/capture/gateway-runs.ts), and the line logged about it. Credentials
 * never reach a run or a log line (the redactor learns each request's before it is recorded).
 */
import type http from "node:http";
import { createHash, timingSafeEqual } from "node:crypto";
import type { Codec } from "../adapters/codec";
import { errorText } from "../adapters/shared";
import { agentFromPrompt } from "../adapters/agent-names";
import type { GatewayRuns } from "./gateway-runs";
import type { Redactor } from "../log/redact";

const AGENT_RE = /^[A-Za-z0-9][A-Za-z0-9_.:@-]{0,63}$/;

const digest = (s: string) => createHash("sha256").update(s).digest();

/** What came of one request: the upstream's answer, or why there is none. */
export interface ExchangeOutcome {
  response?: unknown;
  error?: string;
  durationMs: number;
}

export class GatewayRecorder {
  private readonly keys: { label: string; digest: Buffer }[];
  constructor(
    private readonly runs: GatewayRuns,
    private readonly redactor: Redactor,
    agentKeys: Record<string, string>,
    private readonly log: (line: string) => void,
  ) {
    this.keys = Object.entries(agentKeys).map(([label, key]) => ({ label, digest: digest(key) }));
  }

  /** The x-causeway-agent header, else the API key's label, else the role the system prompt names, as the preload names agents. */
  agentName(req: http.IncomingMessage, codec: Codec, body: unknown): string {
    const h = req.headers["x-causeway-agent"];
    if (typeof h === "string" && AGENT_RE.test(h) && h !== "run") return h;
    const auth = req.headers.authorization;
    const key =
      typeof auth === "string" && /^Bearer\s+/i.test(auth)
        ? auth.replace(/^Bearer\s+/i, "")
        : typeof req.headers["x-api-key"] === "string"
          ? req.headers["x-api-key"]
          : "";
    const d = key ? digest(key) : undefined;
    const hit = d && this.keys.find((k) => timingSafeEqual(k.digest, d));
    if (hit) return hit.label;
    const fromPrompt = agentFromPrompt(codec.blocks(body));
    if (fromPrompt !== "agent") return fromPrompt;
    return d ? `key-${d.toString("hex").slice(0, 8)}` : "agent";
  }

  /** Records the exchange as a decision of its run (a failure too), and logs one line about it. */
  record(codec: Codec, req: http.IncomingMessage, body: unknown, outcome: ExchangeOutcome, url: string): void {
    this.redactor.addHeaders(req.headers);
    this.redactor.addUrl(req.url);
    try {
      const { rec, handoffs } = this.runs.recorderFor(req, (c, b) => this.agentName(req, c, b), codec, body);
      const item = rec.exchange(codec, body, { ...outcome, url });
      if (outcome.error === undefined) handoffs.note(codec.assistantText(item.value), rec.agent, item);
      const calls = outcome.response === undefined ? [] : codec.toolCalls(outcome.response).map((c) => c.name);
      this.log(
        `recorded ${rec.agent.name}: ${codec.api} ${String((body as { model?: unknown }).model ?? "?")}${outcome.error ? ` failed (${outcome.error.slice(0, 80)})` : calls.length ? ` → ${calls.join(", ")}` : ""}`,
      );
    } catch (err) {
      this.log(`not recorded: ${errorText(err)}`);
    }
  }
}
