// @vitest-environment happy-dom
/** @jsxImportSource preact */
// What Find the cause could not test at rung 1 (only the call that made the action re-sent; these
// suspects are not in its request) is shown on the Why screen and in the case file, rebuilt from
// tests.jsonl (core/analysis/not-tested.ts), after a reload; forged lines show as bounded text.
// A real rung-1 attribution: a gateway recording, the fake model over real HTTP.
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startFakeLlm, type FakeLlm } from "../../fake-llm/server";
import { investigate } from "../../../core/analysis/investigate";
import { NOT_TESTED_MAX } from "../../../core/analysis/tested";
import type { Investigation } from "../../../core/analysis/types";
import { readRun } from "../../../core/log/reader";
import { buildCase, caseHtml, caseMarkdown } from "../../../core/report/case";
import { ReplayContext } from "../../../core/replay/context";
import { attribute } from "../../../core/replay/attribute";
import { OneCallSystem } from "../../../core/replay/agentless/one-call";
import { recordDesk } from "../agentless/desk";
import { jobOutcome } from "../../../webview/logic";
import { ScriptedHost, VSCODE, mount, step, text, withText } from "./fixture";

const RUN = "desk-searched";
const HARM = "tool=send_email,arg~vendor-compliance";
const VENDOR = "input:tool:fetch_doc*vendor-note*";
let recorded: FakeLlm;
let replay: FakeLlm;
let tmp: string;
let dir: string;

beforeAll(async () => {
  recorded = await startFakeLlm({ followRate: 1 });
  replay = await startFakeLlm({ followRate: 0.7 });
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "cw-not-tested-"));
  const domFetch = globalThis.fetch;
  globalThis.fetch = nodePost as unknown as typeof fetch;
  try {
    dir = await recordDesk(recorded.url, path.join(tmp, "runs"), path.join(tmp, "marker"), RUN, undefined, { searcher: true });
  } finally {
    globalThis.fetch = domFetch;
  }
  const run = readRun(dir);
  const sys = new OneCallSystem(run, HARM, { baseUrl: replay.openaiBaseURL, apiKey: "k" }, {});
  const a = await attribute(new ReplayContext(run, sys), { target: HARM, suspects: [VENDOR, "msg:researcher->executor"], n: 10, nMax: 40 });
  expect(a.not_tested?.map((x) => x.spec)).toEqual([VENDOR]);
}, 120_000);
afterAll(async () => {
  await recorded?.close();
  await replay?.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

/** Node's HTTP for the recording's POSTs (this file's DOM replaces fetch with a browser's, which applies CORS). */
function nodePost(url: string, init: { method?: string; headers?: Record<string, string>; body?: string }): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: init.method ?? "GET", headers: init.headers }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => (body += c));
      res.on("end", () => {
        const status = res.statusCode ?? 0;
        resolve({ ok: status >= 200 && status < 300, status, text: async () => body, json: async () => JSON.parse(body) });
      });
    });
    req.on("error", reject);
    req.end(init.body);
  });
}

function open(inv: Investigation) {
  const host = new ScriptedHost(VSCODE, { screen: "why", run: RUN });
  const { root } = mount(host);
  host.send({ type: "init", capabilities: VSCODE });
  host.send({ type: "workspace", workspace: { schema: "causeway.workspace.v1", runs: [inv.summary], influence: { sources: [], outcomes: [], edges: [] } } });
  host.send({ type: "investigation", run: RUN, investigation: inv });
  // the e-mail to the planted address (the desk e-mails the customer too)
  const harm = Object.values(inv.actions).find((a) => a.tool === "send_email" && a.args.includes("vendor-compliance"))!;
  step(() => withText(root, ".why-item", `#${harm.seq}`)[0].click());
  return root;
}

describe("not tested at rung 1", () => {
  test("the Why screen lists the suspect the one call re-sent does not hold, with why, after a reload", () => {
    const root = open(investigate(readRun(dir)));
    const box = root.querySelector(".not-tested");
    expect(box).not.toBeNull();
    const items = [...box!.querySelectorAll(".not-tested-list li")].map((li) => text(li));
    expect(items).toEqual([expect.stringMatching(/^tool:fetch_doc\*vendor-note\* ?: not in the request of call #\d+ \(executor\)/)]);
    expect(text(box)).toMatch(/neither causes nor ruled out.*tests\.jsonl:\d+/);
    // the tested brief is still shown with its rung
    expect(text(root)).toContain("rung 1: one call re-sent");
  });

  test("the case file says what was not tested, and why", () => {
    const md = caseMarkdown(buildCase(readRun(dir), { target: HARM }));
    expect(md).toMatch(
      /Not tested, so neither a cause nor ruled out \(tests\.jsonl line \d+\): input:tool:fetch\\_doc\\\*vendor-note\\\*: not in the request of call #\d+ \(executor\)/,
    );
  });

  test("forged lines (markup, huge texts, too many entries, someone else's) show as bounded text, never markup", () => {
    const d = path.join(tmp, "runs", "forged");
    fs.cpSync(dir, d, { recursive: true });
    const evil = `input:<img src=x onerror="globalThis.pwned=1"><script>globalThis.pwned=1</script>`;
    const line = (attribution: string, writer: string, items: unknown) => ({
      target: HARM,
      intervention: "msg:researcher->executor",
      verdict: "inconclusive",
      n: 10,
      ci: [0, 0],
      attribution,
      attribution_not_tested: items,
      writer,
    });
    const items = [
      { spec: evil, reason: "<b>bold</b> reason" },
      { spec: 42, reason: "not text" },
      { spec: "input:huge", reason: "R".repeat(100_000) },
      ...Array.from({ length: 2 * NOT_TESTED_MAX }, (_, i) => ({ spec: `input:n${i}`, reason: "x" })),
    ];
    fs.appendFileSync(
      path.join(d, "tests.jsonl"),
      [line("forged000001", "local", items), line("mallory00001", "mallory", [{ spec: "input:theirs", reason: "not counted" }])]
        .map((l) => JSON.stringify(l))
        .join("\n") + "\n",
    );
    const run = readRun(d);
    const root = open(investigate(run));
    expect(root.querySelector(".not-tested img, .not-tested script, .not-tested b")).toBeNull();
    expect((globalThis as { pwned?: number }).pwned).toBeUndefined();
    const shown = [...root.querySelectorAll(".not-tested-list li")].map((li) => text(li));
    expect(shown[0]).toContain(evil.slice(6));
    expect(shown[0]).toContain("<b>bold</b> reason");
    expect(shown.length).toBe(NOT_TESTED_MAX);
    expect(Math.max(...shown.map((s) => s.length))).toBeLessThan(1500);
    expect(shown.join(" ")).not.toContain("theirs");
    const html = caseHtml(buildCase(run, { target: HARM }));
    expect(html).not.toMatch(/<img|<script|<b>/);
    expect(html).toContain("&lt;b&gt;bold&lt;/b&gt; reason");
  });

  test("Find the cause's result, right after it ran, reads not_tested defensively", () => {
    const o = jobOutcome("attribution", {
      summary: "s",
      not_tested: [{ spec: VENDOR, reason: "not in the request of call #3 (executor)" }, { spec: 1, reason: "x" }, "junk", null],
    });
    expect(o.notTested).toEqual([{ spec: VENDOR, reason: "not in the request of call #3 (executor)" }]);
    expect(jobOutcome("attribution", { not_tested: "<b>x</b>" }).notTested).toBeUndefined();
  });
});
