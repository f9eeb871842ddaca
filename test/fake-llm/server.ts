/**
 * Fake OpenAI and Anthropic HTTP servers on loopback, for tests and examples: no network, no key.
 *
 *   const llm = await startFakeLlm();
 *   new OpenAI({ baseURL: llm.openaiBaseURL, apiKey: "test" });       // POST /v1/chat/completions, /v1/responses
 *   new Anthropic({ baseURL: llm.anthropicBaseURL, apiKey: "test" }); // POST /v1/messages
 *   ...
 *   await llm.close();
 *
 * Both APIs are served by one server, answering with the fake model of policy.ts, plainly or as
 * server-sent events (`stream: true`). Every request is kept in `requests` for assertions.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { canonical } from "../../core/log/hash";
import { drawFor, respond, type Conversation, type Draw, type PolicyOptions, type Reply } from "./policy";
import { anthropicWire, chatWire, responsesWire, type Wire } from "./wire";

export interface FakeRequest {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: Record<string, any>;
}

export interface FakeLlm {
  /** http://127.0.0.1:PORT */
  url: string;
  /** What OpenAI's client takes as baseURL (…/v1). */
  openaiBaseURL: string;
  /** What Anthropic's client takes as baseURL. */
  anthropicBaseURL: string;
  requests: FakeRequest[];
  /** Forget what was seen (the next identical request draws as if new). */
  reset(): void;
  close(): Promise<void>;
}

const WIRES: Record<string, Wire> = {
  "/v1/chat/completions": chatWire,
  "/v1/responses": responsesWire,
  "/v1/messages": anthropicWire,
};

export interface FakeLlmOptions extends Partial<PolicyOptions> {
  port?: number;
  latencyMs?: number;
  /** Like a local model server: no API key asked for. */
  noAuth?: boolean;
  /** Another fake model (e.g. bench-policy.ts); its draws are tagged, so each tag draws on its own. */
  respond?: (conv: Conversation, draw: Draw) => Reply;
  /** Share of requests answered with HTTP 500 (drawn from the request, like the model's draws). */
  errorRate?: number;
}

export async function startFakeLlm(opts: FakeLlmOptions = {}): Promise<FakeLlm> {
  const policy: PolicyOptions = { followRate: opts.followRate ?? 0.8 };
  const seen = new Map<string, number>();
  const requests: FakeRequest[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (c: Buffer) => {
      size += c.length;
      if (size <= 8 << 20) chunks.push(c);
    });
    req.on("end", () => {
      const send = (status: number, body: unknown) => {
        res.writeHead(status, { "content-type": "application/json" });
        res.end(JSON.stringify(body));
      };
      const path = (req.url ?? "/").split("?")[0];
      const wire = WIRES[path];
      if (req.method !== "POST" || !wire) return send(404, { error: { type: "not_found_error", message: `no route ${req.method} ${path}` } });
      if (!opts.noAuth && !req.headers.authorization && !req.headers["x-api-key"])
        return send(401, { error: { type: "authentication_error", message: "no API key" } });
      let body: Record<string, any>;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      } catch {
        return send(400, { error: { type: "invalid_request_error", message: "body is not JSON" } });
      }
      requests.push({ path, headers: req.headers, body });
      const { stream, stream_options, ...rest } = body;
      void stream_options;
      const key = canonical(rest);
      const k = seen.get(key) ?? 0;
      seen.set(key, k + 1);
      // a request with a seed draws from it (the same seed, the same choice); otherwise from the
      // request and how often it was seen
      const seed = typeof body.seed === "number" ? body.seed : undefined;
      if (opts.errorRate && drawFor(`${key}|error`, k) < opts.errorRate)
        return send(500, { error: { type: "server_error", message: "the fake model is overloaded" } });
      const reply = opts.respond
        ? opts.respond(wire.read(body), (tag) => (seed !== undefined ? drawFor(`seed:${seed}|${tag ?? ""}`, 0) : drawFor(`${key}|${tag ?? ""}`, k)))
        : respond(wire.read(body), (tag) => (seed !== undefined ? drawFor(`seed:${seed}|${tag ?? ""}`, 0) : drawFor(key, k)), policy);
      const response = wire.write(body, reply, `${key}|${k}`);
      const latency = Number(req.headers["x-fake-latency-ms"] ?? opts.latencyMs ?? 0);
      const answer = () => {
        if (!stream) return send(200, response);
        res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
        for (const [event, data] of wire.stream(body, response)) {
          res.write(`${event ? `event: ${event}\n` : ""}data: ${typeof data === "string" ? data : JSON.stringify(data)}\n\n`);
        }
        res.end();
      };
      if (latency > 0) setTimeout(answer, Math.min(latency, 60_000));
      else answer();
    });
  });
  await new Promise<void>((resolve) => server.listen(opts.port ?? 0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    openaiBaseURL: `${url}/v1`,
    anthropicBaseURL: url,
    requests,
    reset: () => seen.clear(),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** `node test/fake-llm/run-example.cjs test/fake-llm/server.ts [PORT] [FOLLOW_RATE] [LATENCY_MS]`: serve until Ctrl-C. */
export async function main(args: string[]): Promise<number> {
  const llm = await startFakeLlm({
    port: Number(args[0] ?? 18080),
    followRate: args[1] === undefined ? undefined : Number(args[1]),
    latencyMs: args[2] === undefined ? undefined : Number(args[2]),
  });
  console.log(`fake OpenAI + Anthropic on ${llm.url}\n  OPENAI_BASE_URL=${llm.openaiBaseURL}\n  ANTHROPIC_BASE_URL=${llm.anthropicBaseURL}\n  (any API key)`);
  await new Promise<void>((resolve) => {
    process.once("SIGINT", resolve);
    process.once("SIGTERM", resolve);
  });
  await llm.close();
  return 0;
}
