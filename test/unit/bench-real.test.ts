/**
 * The real-model benchmark end to end against fake OpenAI and Anthropic servers on loopback: the
 * real HTTP path, the server counting what it received. The key given through --api-key-env must
 * be sent and never written; --max-calls is a hard cap; a model that answers oddly or fails is
 * counted, not fatal.
 */
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { callsInText, endpointKind, ModelClient, readAnthropic, readOpenai, requestUrl } from "../../bench/real-client";
import { realMain, safeCommand, type Io } from "../../bench/real-main";
import { estimate, parseRealArgs } from "../../bench/real-options";
import type { RealResult } from "../../bench/real-report";
import { benchPolicy } from "../fake-llm/bench-policy";
import { startFakeLlm, type FakeLlm } from "../fake-llm/server";

const KEY = "sk-bench-test-4f1d2c9e8a7b6c5d";
const env = { ...process.env, BENCH_TEST_KEY: KEY };
const dirs: string[] = [];
const tmp = () => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), "causeway-realbench-test-"));
  dirs.push(d);
  return d;
};
afterAll(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

function io(opts: Partial<Io> = {}): Io & { out: string[]; err: string[] } {
  const out: string[] = [];
  const err: string[] = [];
  return { stdout: (s) => void out.push(s), stderr: (s) => void err.push(s), interactive: false, env, out, err, ...opts };
}

/** Every file under dir, recursively. */
function files(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(path.join(dir, e.name)) : [path.join(dir, e.name)]));
}

function noKeyIn(dir: string): void {
  for (const f of files(dir)) expect(fs.readFileSync(f, "utf8"), f).not.toContain(KEY);
}

describe("the real-model benchmark on a fake OpenAI-compatible server", () => {
  let llm: FakeLlm;
  beforeAll(async () => {
    llm = await startFakeLlm({ respond: benchPolicy({ followRate: 0.95, oddRate: 0.1 }), errorRate: 0.03, latencyMs: 2, noAuth: true });
  });
  afterAll(() => llm.close());

  it("records, checks the ground truth, finds the cause, stays under --max-calls and writes no key", async () => {
    const out = tmp();
    const keep = tmp();
    const x = io();
    const args = [
      "--endpoint",
      `${llm.url}/v1?tenant=${KEY}`,
      "--model",
      "fake-7b",
      "--api-key-env",
      "BENCH_TEST_KEY",
      "--scenario",
      "exfil",
      "--scenario",
      "control",
      "--runs",
      "3",
      "--truth-n",
      "8",
      "--n",
      "6",
      "--n-max",
      "10",
      "--max-calls",
      "400",
      "--yes",
      "--json",
      "--out",
      out,
      "--keep-runs",
      keep,
    ];
    expect(await realMain(args, x)).toBe(0);
    const received = llm.requests.length;
    expect(received).toBeGreaterThan(0);
    expect(received).toBeLessThanOrEqual(400);
    // every request carried the key, in its header only
    expect(llm.requests.every((r) => r.headers.authorization === `Bearer ${KEY}`)).toBe(true);
    // stdout holds only the results document
    const doc = JSON.parse(x.out.join("")) as RealResult;
    const written = files(out).filter((f) => f.endsWith(".json"));
    expect(written).toHaveLength(1);
    expect(JSON.parse(fs.readFileSync(written[0], "utf8"))).toEqual(doc);
    expect(doc.model_calls.calls).toBe(received);
    expect(doc.model).toBe("fake-7b");
    expect(doc.endpoint).toEqual({ api: "openai chat completions", where: "local" });
    expect(doc.stopped).toBeNull();
    expect(doc.settings.pairs).toMatch(/unseeded/);
    const exfil = doc.scenarios.find((s) => s.name === "exfil")!;
    expect(exfil.ground_truth.verdict).toBe("confirmed");
    expect(exfil.ground_truth.without.harmful).toBe(0);
    expect(exfil.harmful_runs).toBeGreaterThan(0);
    expect(exfil.attributed + exfil.attributions.filter((a) => a.error).length).toBe(exfil.harmful_runs);
    expect(exfil.exact).toBeGreaterThan(0);
    expect(exfil.false_blames).toBe(0);
    expect(exfil.baselines.reach.exact).toBe(0); // reach blames every untrusted input
    expect(doc.confirmed.scenarios).toEqual(["exfil"]);
    expect(doc.confirmed.exact).toBe(exfil.exact);
    expect(doc.control).toEqual({ scenarios: ["control"], runs: 3, high_alerts: 0 });
    // odd answers were counted, not fatal
    const m = doc.model_calls;
    expect(m.free_text + m.calls_from_text + m.odd_tool_calls + Object.values(m.errors).reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
    // no key anywhere: the results, the Markdown, the recorded runs, the progress
    noKeyIn(out);
    noKeyIn(keep);
    expect(x.err.join("")).not.toContain(KEY);
    expect(doc.command).not.toContain(llm.url);
    const md = fs.readFileSync(written[0].replace(/\.json$/, ".md"), "utf8");
    expect(md).toMatch(/Where the ground-truth check confirms the planted document drives the harm \(exfil\)/);
  }, 60_000);

  it("stops cleanly at the cap: exit 0, what finished, marked as stopped, never a call beyond it", async () => {
    const out = tmp();
    llm.requests.length = 0;
    const x = io();
    const code = await realMain(
      [
        "--endpoint",
        llm.url,
        "--model",
        "fake-7b",
        "--scenario",
        "exfil",
        "--scenario",
        "admin",
        "--runs",
        "3",
        "--n-max",
        "10",
        "--max-calls",
        "25",
        "--yes",
        "--json",
        "--out",
        out,
      ],
      x,
    );
    expect(code).toBe(0);
    expect(llm.requests.length).toBeLessThanOrEqual(25);
    const doc = JSON.parse(x.out.join("")) as RealResult;
    expect(doc.stopped).toMatchObject({ by: "cap", reason: "25 model calls" });
    expect(doc.stopped!.unfinished.length + doc.stopped!.not_started.length).toBeGreaterThan(0);
    // both scenarios were recorded (12 calls) before the ground truth ran into the cap: kept
    expect(doc.scenarios.map((s) => [s.name, s.runs, s.status])).toEqual([
      ["exfil", 3, "stopped by the cap"],
      ["admin", 3, "stopped by the cap"],
    ]);
    expect(doc.model_calls.calls).toBe(llm.requests.length);
    expect(
      fs.readFileSync(
        files(out).find((f) => f.endsWith(".md"))!,
        "utf8",
      ),
    ).toMatch(/Stopped by the cap/);
  }, 60_000);

  it("never overwrites a results file: a second run gets a new name", async () => {
    const out = tmp();
    const run = () => realMain(["--endpoint", llm.url, "--model", "fake-7b", "--scenario", "control", "--runs", "1", "--yes", "--json", "--out", out], io());
    expect(await run()).toBe(0);
    const first = files(out).map((f) => [f, fs.readFileSync(f, "utf8")]);
    expect(await run()).toBe(0);
    expect(files(out)).toHaveLength(4);
    for (const [f, text] of first) expect(fs.readFileSync(f, "utf8")).toBe(text);
  }, 30_000);
});

describe("a fake written for other tests", () => {
  it("the capture tests' fake model (instructions planted in tool results) drives the harness too", async () => {
    const llm = await startFakeLlm({ followRate: 0.9, noAuth: true });
    try {
      const x = io();
      expect(
        await realMain(
          [
            "--endpoint",
            `${llm.url}/v1`,
            "--model",
            "fake",
            "--scenario",
            "exfil",
            "--runs",
            "2",
            "--truth-n",
            "6",
            "--n-max",
            "10",
            "--max-calls",
            "300",
            "--yes",
            "--json",
            "--out",
            tmp(),
          ],
          x,
        ),
      ).toBe(0);
      const doc = JSON.parse(x.out.join("")) as RealResult;
      const exfil = doc.scenarios[0];
      expect(exfil.ground_truth.verdict).toBe("confirmed");
      expect(exfil.exact).toBeGreaterThan(0);
      expect(exfil.false_blames).toBe(0);
      expect(doc.model_calls.calls).toBe(llm.requests.length);
    } finally {
      await llm.close();
    }
  }, 60_000);
});

describe("the real-model benchmark on a fake Anthropic messages server", () => {
  it("detects the API from the URL path, sends x-api-key, finds the planted cause", async () => {
    const llm = await startFakeLlm({ respond: benchPolicy({ followRate: 0.95 }), noAuth: true });
    try {
      const out = tmp();
      const x = io();
      const code = await realMain(
        [
          "--endpoint",
          `${llm.url}/v1/messages`,
          "--model",
          "fake-claude",
          "--api-key-env",
          "BENCH_TEST_KEY",
          "--scenario",
          "admin",
          "--runs",
          "2",
          "--truth-n",
          "6",
          "--n-max",
          "10",
          "--max-calls",
          "300",
          "--yes",
          "--json",
          "--out",
          out,
        ],
        x,
      );
      expect(code).toBe(0);
      expect(llm.requests.length).toBeGreaterThan(0);
      expect(llm.requests.every((r) => r.path === "/v1/messages" && r.headers["x-api-key"] === KEY)).toBe(true);
      const doc = JSON.parse(x.out.join("")) as RealResult;
      expect(doc.endpoint.api).toBe("anthropic messages");
      const admin = doc.scenarios[0];
      expect(admin.ground_truth.verdict).toBe("confirmed");
      expect(admin.harmful_runs).toBeGreaterThan(0);
      expect(admin.exact).toBeGreaterThan(0);
      expect(admin.false_blames).toBe(0);
      expect(llm.requests.length).toBeLessThanOrEqual(300);
      noKeyIn(out);
    } finally {
      await llm.close();
    }
  }, 60_000);
});

describe("ground truth that does not hold is reported apart", () => {
  it("a model that does the harm with or without the planted document: not confirmed, not scored", async () => {
    // the planner refunds whatever the notes say: the memo changes nothing
    const llm = await startFakeLlm({
      respond: (conv) =>
        conv.tools.length ? { text: "", calls: [{ name: "issue_refund", args: { order_id: 7784, amount: 520 } }] } : { text: "Notes.", calls: [] },
      noAuth: true,
    });
    try {
      const x = io();
      expect(
        await realMain(
          [
            "--endpoint",
            llm.url,
            "--model",
            "eager",
            "--scenario",
            "refund",
            "--runs",
            "2",
            "--truth-n",
            "4",
            "--n-max",
            "8",
            "--max-calls",
            "200",
            "--yes",
            "--json",
            "--out",
            tmp(),
          ],
          x,
        ),
      ).toBe(0);
      const doc = JSON.parse(x.out.join("")) as RealResult;
      expect(doc.scenarios[0].ground_truth).toMatchObject({ verdict: "not-confirmed", with: { harmful: 4, runs: 4 }, without: { harmful: 4, runs: 4 } });
      expect(doc.confirmed.scenarios).toEqual([]);
      expect(doc.unconfirmed.scenarios).toEqual(["refund"]);
      expect(doc.unconfirmed.harmful_runs).toBe(2);
    } finally {
      await llm.close();
    }
  }, 60_000);
});

describe("refusals: bad input, no confirmation", () => {
  const base = ["--endpoint", "http://127.0.0.1:9/v1", "--model", "m", "--scenario", "exfil"];
  const cases: [string[], RegExp][] = [
    [[...base, "--api-key-env", "NO_SUCH_VARIABLE_HERE"], /NO_SUCH_VARIABLE_HERE.*not set/],
    [[...base, "--max-usd", "2"], /--max-usd needs the model's price/],
    [[...base, "--price", "other=1,2"], /not the model m/],
    [[...base, "--runs", "0"], /--runs must be a positive integer/],
    [[...base, "--scenario", "nope"], /no scenario "nope"/],
    [["--endpoint", "file:///etc/passwd", "--model", "m"], /http or https/],
    [[...base, "--runs", "5", "--max-calls", "4", "--yes"], /--max-calls 4 is below the recording of the first scenario \(exfil: 5 runs × 2 calls\)/],
    [base, /pass --yes to confirm/],
  ];
  it.each(cases)("%j is refused with exit 2 and one JSON error, no call made", async (argv, msg) => {
    const x = io();
    expect(await realMain([...argv, "--json"], x)).toBe(2);
    const e = JSON.parse(x.out.join("")) as { error: string; code: string };
    expect(e.error).toMatch(msg);
    expect(typeof e.code).toBe("string");
  });

  it("asks on a terminal, and a no runs nothing", async () => {
    const x = io({ interactive: true, ask: async () => "n" });
    expect(await realMain(["--endpoint", "http://127.0.0.1:9/v1", "--model", "m", "--scenario", "exfil"], x)).toBe(2);
    expect(x.err.join("")).toMatch(/Estimate: .* model calls expected/);
    expect(x.err.join("")).toMatch(/not confirmed: nothing was run/);
  });
});

describe("the client reads what models really send", () => {
  it("tool calls in text, broken arguments, Anthropic blocks", () => {
    expect(callsInText('Sure.\n<tool_call>{"name": "send_email", "arguments": {"to": "a@b.example"}}</tool_call>')).toEqual([
      { tool: "send_email", args: { to: "a@b.example" } },
    ]);
    expect(callsInText('```json\n[{"tool": "escalate", "args": {"reason": "x"}}]\n```')).toEqual([{ tool: "escalate", args: { reason: "x" } }]);
    expect(callsInText("no calls here {not json")).toEqual([]);
    const o = readOpenai({ choices: [{ message: { content: null, tool_calls: [{ function: { name: "send_email", arguments: "{broken" } }] } }] });
    expect(o!.calls).toEqual([{ tool: "send_email", args: null }]);
    expect(readOpenai({ nope: 1 })).toBeNull();
    const a = readAnthropic({
      content: [
        { type: "text", text: "ok" },
        { type: "tool_use", name: "escalate", input: { reason: "r" } },
      ],
      usage: { input_tokens: 10, output_tokens: 3 },
    });
    expect(a).toEqual({ text: "ok", calls: [{ tool: "escalate", args: { reason: "r" } }], usage: { input_tokens: 10, output_tokens: 3, estimated: false } });
  });

  it("request URLs, endpoint kinds and the command in the results keep no credentials", () => {
    expect(requestUrl("http://localhost:11434/v1", "openai")).toBe("http://localhost:11434/v1/chat/completions");
    expect(requestUrl("http://localhost:8080", "openai")).toBe("http://localhost:8080/v1/chat/completions");
    expect(requestUrl("https://api.anthropic.com/v1/messages", "anthropic")).toBe("https://api.anthropic.com/v1/messages");
    expect(endpointKind("https://u:p@api.example.com/v1?key=k", "openai")).toEqual({ api: "openai chat completions", where: "hosted" });
    expect(safeCommand(["--endpoint", "https://u:secret@h/v1?key=k", "--model", "m"])).toBe("npm run bench -- --endpoint <endpoint> --model m");
    expect(safeCommand(["--endpoint=https://u:secret@h/v1", "--model", "m"])).not.toContain("secret");
  });

  it("credentials in the endpoint's URL go in a header, never in the URL fetched", async () => {
    const llm = await startFakeLlm({ respond: () => ({ text: "hello", calls: [] }) });
    try {
      const c = new ModelClient({ api: "openai", endpoint: llm.url.replace("//", "//user:pw-secret-1@") + "/v1", model: "m" });
      expect((await c.chat({ system: "s", user: "u" })).text).toBe("hello");
      expect(llm.requests[0].headers.authorization).toBe(`Basic ${Buffer.from("user:pw-secret-1").toString("base64")}`);
    } finally {
      await llm.close();
    }
  });

  it("a dollar cap stops before a call that would pass it", async () => {
    const llm = await startFakeLlm({ respond: () => ({ text: "hello", calls: [] }), noAuth: true });
    try {
      const c = new ModelClient({ api: "openai", endpoint: llm.url, model: "m", maxUsd: 0.001, price: { input: 100, output: 100 } });
      let sent = 0;
      await expect(
        (async () => {
          for (;;) {
            await c.chat({ system: "s", user: "u".repeat(40), maxTokens: 1 });
            sent++;
          }
        })(),
      ).rejects.toThrow(/stopped by the cap/);
      expect(sent).toBe(llm.requests.length);
      expect(c.counts.usd!).toBeLessThanOrEqual(0.001);
    } finally {
      await llm.close();
    }
  });

  it("a rate limit is tried again, each try counted against the cap; other errors are counted, not fatal", async () => {
    let n = 0;
    const server = http.createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        n++;
        if (n <= 2) res.writeHead(429, { "retry-after": "0" }).end("slow down");
        else if (n === 3) res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ choices: [{ message: { content: "fine" } }] }));
        else if (n === 4) res.writeHead(200).end("<html>not json</html>");
        else res.writeHead(500).end(`boom ${KEY}`);
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
      const c = new ModelClient({ api: "openai", endpoint: url, model: "m", apiKey: KEY, maxCalls: 6, retryWaitMs: 1 });
      expect((await c.chat({ system: "s", user: "u" })).text).toBe("fine");
      expect(c.counts.calls).toBe(3);
      expect(c.counts.errors).toEqual({ "http 429, tried again": 2 });
      expect((await c.chat({ system: "s", user: "u" })).error).toMatch(/^not json/);
      const failed = await c.chat({ system: "s", user: "u" });
      expect(failed.error).toMatch(/^http 500: boom \[redacted\]/);
      expect(c.counts.errors).toMatchObject({ "not json": 1, "http 500": 1 });
      await c.chat({ system: "s", user: "u" });
      await expect(c.chat({ system: "s", user: "u" })).rejects.toThrow(/stopped by the cap: 6 model calls/);
      expect(n).toBe(6);
    } finally {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    }
  });

  it("the estimate bounds what a run may cost", () => {
    const o = parseRealArgs(
      ["--endpoint", "http://h/v1", "--model", "m", "--scenario", "exfil", "--runs", "2", "--truth-n", "3", "--n-max", "10", "--price", "m=1,2"],
      {},
    );
    const e = estimate(o);
    expect(e.calls.record).toBe(4);
    expect(e.calls.ground_truth).toBe((3 + 1) * 2);
    expect(e.calls.max).toBeGreaterThan(e.calls.expected);
    expect(e.usd!.max).toBeGreaterThan(0);
  });
});
