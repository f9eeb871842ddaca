/**
 * A hostile (or merely careless) model upstream on loopback, for the canary scans: it echoes every
 * credential it receives — all request headers and the full query string — in what it answers.
 *
 *   POST /v1/chat/completions   200 with an assistant message quoting the headers, the URL and the
 *                               last user message; or, when that message says "fail", 401 with an
 *                               error body quoting them (as some providers quote a bad key)
 *   POST /v1/messages           the same in Anthropic's shape
 *
 * Every request is kept in `requests`.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";

export interface EchoRequest {
  url: string;
  headers: http.IncomingHttpHeaders;
  body: any;
}

export interface EchoUpstream {
  /** http://127.0.0.1:PORT */
  url: string;
  requests: EchoRequest[];
  close(): Promise<void>;
}

function lastUserText(body: any): string {
  const msgs: any[] = Array.isArray(body?.messages) ? body.messages : [];
  for (let i = msgs.length - 1; i >= 0; i--) {
    const m = msgs[i];
    if (m?.role !== "user") continue;
    if (typeof m.content === "string") return m.content;
    if (Array.isArray(m.content)) return m.content.map((p: any) => (typeof p?.text === "string" ? p.text : "")).join(" ");
  }
  return "";
}

export async function startEchoUpstream(): Promise<EchoUpstream> {
  const requests: EchoRequest[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      let body: any = {};
      try {
        body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      } catch {
        /* echoed as empty */
      }
      requests.push({ url: req.url ?? "/", headers: req.headers, body });
      const said = lastUserText(body);
      const echo = `authorization ${req.headers.authorization ?? "-"}; x-api-key ${req.headers["x-api-key"] ?? "-"}; url ${req.url}; you said: ${said}; headers ${JSON.stringify(req.headers)}`;
      const anthropic = (req.url ?? "").split("?")[0] === "/v1/messages";
      const send = (status: number, v: unknown) => {
        res.writeHead(status, { "content-type": "application/json" });
        res.end(JSON.stringify(v));
      };
      if (/\bfail\b/.test(said)) {
        return send(
          401,
          anthropic
            ? { type: "error", error: { type: "authentication_error", message: `invalid x-api-key: ${echo}` } }
            : { error: { type: "invalid_request_error", code: "invalid_api_key", message: `Incorrect API key provided: ${echo}` } },
        );
      }
      if (anthropic) {
        return send(200, {
          id: "msg_echo",
          type: "message",
          role: "assistant",
          model: body.model ?? "echo",
          content: [{ type: "text", text: echo }],
          stop_reason: "end_turn",
          usage: { input_tokens: 1, output_tokens: 1 },
        });
      }
      send(200, {
        id: "chatcmpl-echo",
        object: "chat.completion",
        created: 0,
        model: body.model ?? "echo",
        choices: [{ index: 0, message: { role: "assistant", content: echo }, finish_reason: "stop" }],
        usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
