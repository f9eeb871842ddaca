/**
 * Credentials never reach disk, part by part (the end-to-end scan is canary-scan.test.ts): which
 * query parameters, headers and environment variables count as credentials; that a redacted run
 * still verifies (redaction happens before hashing); the client adapters, the gateway's log lines
 * and the OTel import; and that a decision replay never sends the user's key to an address the run
 * names, nor prints the key when the endpoint echoes it.
 */
import { randomBytes } from "node:crypto";
import { spawn } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import OpenAI from "openai";
import { afterEach, describe, expect, it } from "vitest";
import { envSecrets, headerSecrets, isCredentialHeader, isCredentialParam, redactQuery, Redactor, REDACTED } from "../../../core/log/redact";
import { openRun, runDir } from "../../../core/adapters/shared";
import { traceOpenAI } from "../../../core/adapters/openai";
import { startGateway } from "../../../core/capture/gateway";
import { importOtel } from "../../../core/importers/otel";
import { readRun } from "../../../core/log/reader";
import { appendTest, readTestsLog } from "../../../core/log/testslog";
import { startEchoUpstream } from "../../fake-llm/echo-credentials";
import { startFakeLlm } from "../../fake-llm/server";

const ROOT = path.resolve(import.meta.dirname, "../../..");
const CLI = path.join(ROOT, "dist/cli.js");
const secret = (tag: string) => `${tag}-${randomBytes(12).toString("hex")}`;

const open: { close(): Promise<void> }[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const x of open.splice(0)) await x.close();
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});
const tmp = () => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), "cw-redact-"));
  dirs.push(d);
  return d;
};

/** The text of every file under a folder. */
function allText(dir: string): string {
  const out: string[] = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true, recursive: true }))
    if (e.isFile()) out.push(fs.readFileSync(path.join(e.parentPath, e.name), "latin1"));
  return out.join("\n");
}

describe("what counts as a credential", () => {
  it("query parameters: key, api-key, api_key, apikey, token, access_token, auth, sig, signature, x-amz-signature…, any case", () => {
    for (const n of [
      "key",
      "KEY",
      "api-key",
      "api_key",
      "apikey",
      "ApiKey",
      "token",
      "access_token",
      "id_token",
      "auth",
      "sig",
      "signature",
      "X-Amz-Signature",
      "x-amz-security-token",
      "X-Amz-Credential",
      "x-goog-signature",
      "client_secret",
      "password",
    ]) {
      expect(isCredentialParam(n), n).toBe(true);
    }
    for (const n of ["model", "api-version", "page", "q", "monkey", "keyword", "format"]) expect(isCredentialParam(n), n).toBe(false);
  });

  it("a URL's credential values are replaced visibly, the rest of it kept", () => {
    expect(redactQuery("https://x.example/v1/chat?api-version=2024-06&key=AIzaSECRET123&q=1")).toBe(
      "https://x.example/v1/chat?api-version=2024-06&key=[redacted]&q=1",
    );
    expect(redactQuery("GET /o/file.pdf?X-Amz-Credential=AKIA%2F1&X-Amz-Signature=ab12cd#top")).toBe(
      "GET /o/file.pdf?X-Amz-Credential=[redacted]&X-Amz-Signature=[redacted]#top",
    );
    expect(redactQuery("no query here")).toBe("no query here");
  });

  it("headers: the secret after an auth scheme, cookie values, a Basic password", () => {
    for (const h of ["authorization", "Proxy-Authorization", "x-api-key", "api-key", "cookie", "x-goog-api-key", "x-auth-token"])
      expect(isCredentialHeader(h), h).toBe(true);
    for (const h of ["content-type", "x-causeway-agent", "anthropic-version", "user-agent"]) expect(isCredentialHeader(h), h).toBe(false);
    expect(headerSecrets("authorization", "Bearer sk-abc123456789")).toEqual(["sk-abc123456789"]);
    expect(headerSecrets("cookie", "session=s3cr3tvalue99; theme=dark")).toEqual(["s3cr3tvalue99", "dark"]);
    expect(headerSecrets("authorization", `Basic ${Buffer.from("me:hunter2hunter2").toString("base64")}`)).toContain("hunter2hunter2");
    const r = new Redactor();
    r.addHeaders({ authorization: "Bearer sk-abc123456789", "content-type": "application/json" });
    expect(r.text('{"seen":"Bearer sk-abc123456789","type":"application/json"}')).toBe('{"seen":"Bearer [redacted]","type":"application/json"}');
  });

  it("environment: names with KEY, TOKEN, SECRET, PASSWORD, PASS, CREDENTIAL, AUTH, values long and random enough", () => {
    const env = {
      OPENAI_API_KEY: "sk-proj-Abc123def456",
      GH_TOKEN: "ghp_16C7e42F292c6912E7710c838347Ae178B4a",
      DB_PASSWORD: "hunter22x",
      MY_CREDENTIALS: "correcthorsebatterystaple",
      SHORT_TOKEN: "abc12",
      AUTH_PROVIDER: "anthropic",
      SSH_AUTH_SOCK: "/tmp/ssh-XXXX/agent.123",
      KEY_COUNT: "123456789",
      HOME: "/root/Abc123def456",
      EDITOR_MODE: "Vim12345678",
    };
    expect(envSecrets(env).sort()).toEqual(
      ["correcthorsebatterystaple", "ghp_16C7e42F292c6912E7710c838347Ae178B4a", "hunter22x", "sk-proj-Abc123def456"].sort(),
    );
  });

  it("a secret's start left at the end of a text cut short is redacted too; refs and short values are left alone", () => {
    const s = secret("sk");
    const r = new Redactor([s, "short"]);
    expect(r.text(`HTTP 401: your key ${s.slice(0, 12)}`)).toBe(`HTTP 401: your key ${REDACTED}`);
    expect(r.text("a short text")).toBe("a short text");
    const ref = "sha256:" + "ab".repeat(32);
    const v = { ref, list: [1, "x", { k: `a${s}b` }], [s]: true };
    const out = r.value(v);
    expect(out).toEqual({ ref, list: [1, "x", { k: `a${REDACTED}b` }], [REDACTED]: true });
    expect(v.list[2]).toEqual({ k: `a${s}b` }); // the value given is not changed
    const same = { a: "nothing to hide", b: [1, 2] };
    expect(r.value(same)).toBe(same);
  });
});

describe("redaction in recordings", () => {
  it("runs hold [redacted] where an environment secret was, and still verify (hashed after redaction)", async () => {
    const s = secret("cwenv");
    process.env.CW_TEST_SECRET_TOKEN = s;
    let dir: string;
    try {
      const rt = openRun({ out: tmp(), runId: "env" });
      const a = rt.agent("a");
      a.observe(`the .env file says CW_TEST_SECRET_TOKEN=${s}`, { source: "tool:read_file", trust: "untrusted" });
      await a.act("send", { to: "x", body: `token ${s}` }).catch(() => undefined);
      await rt.finish({ note: `done with ${s}` });
      dir = runDir(rt)!;
    } finally {
      delete process.env.CW_TEST_SECRET_TOKEN;
    }
    const text = allText(dir);
    expect(text).not.toContain(s);
    expect(text).toContain(`CW_TEST_SECRET_TOKEN=${REDACTED}`);
    const run = readRun(dir, { checkBlobs: true });
    expect(run.problems.filter((p) => p.severity === "error")).toEqual([]);
  });

  it("tests.jsonl: a replay's result holding an environment secret or a credential query value is written as [redacted], and the log still verifies", () => {
    const s = secret("cwtests");
    const dir = tmp();
    process.env.CW_TESTS_AUTH_TOKEN = s;
    try {
      appendTest(dir, {
        scope: "decision",
        verdict: "inconclusive",
        note: `live tool said ${s}`,
        endpoint: { url: "https://h.example/v1?api_key=AbCdEf123456" },
      });
    } finally {
      delete process.env.CW_TESTS_AUTH_TOKEN;
    }
    const text = fs.readFileSync(path.join(dir, "tests.jsonl"), "utf8");
    expect(text).not.toContain(s);
    expect(text).not.toContain("AbCdEf123456");
    expect(text).toContain("live tool said [redacted]");
    expect(text).toContain("api_key=[redacted]");
    expect(readTestsLog(dir).problems).toEqual([]);
  });

  it("the OpenAI adapter: the client's apiKey and defaultQuery key, echoed by the upstream, are recorded as [redacted]", async () => {
    const echo = await startEchoUpstream();
    open.push(echo);
    const [k1, k2] = [secret("sk"), secret("q")];
    const rt = openRun({ out: tmp(), runId: "adapter" });
    const ai = traceOpenAI(new OpenAI({ baseURL: `${echo.url}/v1`, apiKey: k1, defaultQuery: { api_key: k2 }, maxRetries: 0 }), rt.agent("a"));
    const res = await ai.chat.completions.create({ model: "m", messages: [{ role: "user", content: "hi" }] });
    expect(res.choices[0].message.content).toContain(k1);
    await expect(ai.chat.completions.create({ model: "m", messages: [{ role: "user", content: "fail now" }] })).rejects.toThrow();
    await rt.finish();
    const text = allText(runDir(rt)!);
    expect(text).not.toContain(k1);
    expect(text).not.toContain(k2);
    expect(text).toContain("Bearer [redacted]");
    expect(text).toContain("api_key=[redacted]");
  });

  it("the gateway: its log lines name no key, even when the upstream's error starts with it", async () => {
    const k = secret("sk");
    const up = http.createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        res.writeHead(401, { "content-type": "text/plain" });
        res.end(`${req.headers.authorization} is not a valid key (${req.url})`);
      });
    });
    await new Promise<void>((r) => up.listen(0, "127.0.0.1", r));
    open.push({ close: () => new Promise<void>((r) => up.close(() => r())) });
    const lines: string[] = [];
    const out = tmp();
    const gw = await startGateway({
      upstream: `http://127.0.0.1:${(up.address() as AddressInfo).port}`,
      outDir: out,
      port: 0,
      runId: "gw",
      log: (l) => lines.push(l),
    });
    open.push(gw);
    const r = await fetch(`${gw.url}/v1/chat/completions?token=${k}x`, {
      method: "POST",
      headers: { authorization: `Bearer ${k}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "m", messages: [{ role: "user", content: "hi" }] }),
    });
    expect(r.status).toBe(401);
    await r.text();
    await gw.close();
    expect(lines.join("\n")).toContain("failed (HTTP 401: Bearer [redacted] is not a valid key");
    expect(lines.join("\n")).not.toContain(k);
    expect(allText(out)).not.toContain(k);
    expect(allText(out)).toContain("token=[redacted]");
  });

  it("the OTel import: credential query values and environment secrets in spans are recorded as [redacted]", () => {
    const s = secret("cwotel");
    const trace = JSON.parse(fs.readFileSync(path.join(ROOT, "test/fixtures/otel/support-agent.json"), "utf8"));
    const span = trace.resourceSpans[0].scopeSpans[0].spans[0];
    span.attributes.push({
      key: "gen_ai.request.endpoint",
      value: { stringValue: `https://r.openai.azure.com/openai/deployments/d/chat/completions?api-version=2024-06-01&api-key=${s}` },
    });
    const sys = span.attributes.find((a: { key: string }) => a.key === "gen_ai.system_instructions");
    sys.value.stringValue = JSON.stringify([{ type: "text", content: `Use the key ${s}z and fetch https://files.example/a.pdf?X-Amz-Signature=0a1b2c3d4e5f` }]);
    const d = tmp();
    const file = path.join(d, "trace.json");
    fs.writeFileSync(file, JSON.stringify(trace));
    process.env.CW_OTEL_API_KEY = `${s}z`;
    let runs: string[];
    try {
      runs = importOtel(file, path.join(d, "runs")).runs;
    } finally {
      delete process.env.CW_OTEL_API_KEY;
    }
    const text = allText(runs[0]);
    expect(text).not.toContain(s);
    expect(text).not.toContain("0a1b2c3d4e5f");
    expect(text).toContain("api-key=[redacted]");
    expect(text).toContain("X-Amz-Signature=[redacted]");
    expect(text).toContain("Use the key [redacted]");
    expect(readRun(runs[0], { checkBlobs: true }).problems).toEqual([]);
  });
});

function cli(args: string[], env: Record<string, string | undefined>): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const e: NodeJS.ProcessEnv = { ...process.env };
    for (const [k, v] of Object.entries(env)) {
      if (v === undefined) delete e[k];
      else e[k] = v;
    }
    const child = spawn(process.execPath, [CLI, ...args], { cwd: ROOT, env: e });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c) => (stdout += c));
    child.stderr.on("data", (c) => (stderr += c));
    child.on("close", (code) => resolve({ code: code ?? 1, stdout, stderr }));
  });
}

describe("decision replay (test-endpoint) never lets the run choose where the key goes", () => {
  it("a run recorded against another upstream is refused without --base-url, naming it; with the endpoint from the environment, only that endpoint gets the key, and its echo of the key is never printed", async () => {
    // the run: recorded against "recorded" (which a hostile run file could name as anything)
    const recorded = await startFakeLlm();
    open.push(recorded);
    const rt = openRun({ out: tmp(), runId: "elsewhere" });
    const ai = traceOpenAI(new OpenAI({ baseURL: recorded.openaiBaseURL, apiKey: "recording-key-1", maxRetries: 0 }), rt.agent("a"));
    await ai.chat.completions.create({
      model: "m",
      messages: [
        { role: "system", content: "be brief" },
        { role: "user", content: "please fail" },
      ],
    });
    await rt.finish();
    const dir = runDir(rt)!;
    const seq = String(readRun(dir).events.find((e) => e.type === "decision")!.seq);
    const seen = recorded.requests.length;
    const key = secret("sk-user");
    const args = ["test-endpoint", dir, "--decision", seq, "--remove", "input:system", "--contains", "x", "--n", "2"];

    const refused = await cli(args, { OPENAI_API_KEY: key, OPENAI_BASE_URL: undefined });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`recorded against "${recorded.openaiBaseURL}/chat/completions"`);
    expect(refused.stderr).toContain("--base-url");
    expect(recorded.requests.length).toBe(seen); // nothing was sent to the recorded address

    // the endpoint named by the environment echoes the key in its 401 body: the error printed says [redacted]
    const echo = await startEchoUpstream();
    open.push(echo);
    const failed = await cli(args, { OPENAI_API_KEY: key, OPENAI_BASE_URL: `${echo.url}/v1` });
    expect(failed.code).toBe(1);
    expect(echo.requests.length).toBeGreaterThan(0);
    expect(echo.requests.every((r) => r.headers.authorization === `Bearer ${key}`)).toBe(true); // the key from the environment, not the run
    expect(recorded.requests.length).toBe(seen);
    expect(failed.stderr).toContain("Bearer [redacted]");
    expect(failed.stdout + failed.stderr).not.toContain(key);
    expect(allText(dir)).not.toContain(key);
  });
});
