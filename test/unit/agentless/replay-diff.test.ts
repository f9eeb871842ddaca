/**
 * `causeway replay` without the program: a gateway recording is replayed from its recorded
 * requests (rung 2) and diffed against the original, as a program replay is. Real HTTP: the fake
 * servers, the gateway and the CLI (dist/cli.js).
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeLlm, type FakeLlm } from "../../fake-llm/server";
import { openRun, runDir } from "../../../core/adapters/shared";
import { cli, recordDesk } from "./desk";

const KEY = "sk-user-replay-3b90";

let recorded: FakeLlm;
let replay: FakeLlm;
let tmp: string;
let marker: string;
let dir: string;

beforeAll(async () => {
  // the replay's model answers as the recording's did: an unchanged replay is identical
  recorded = await startFakeLlm({ followRate: 1 });
  replay = await startFakeLlm({ followRate: 1 });
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "cw-replay-diff-"));
  marker = path.join(tmp, "executed.log");
  dir = await recordDesk(recorded.url, path.join(tmp, "runs"), marker, "desk");
});
afterAll(async () => {
  await recorded?.close();
  await replay?.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

describe("causeway replay without the program", () => {
  it("replays a gateway recording at rung 2: identical when nothing is removed; no tool runs, only the caller's endpoint and key", async () => {
    const ran = fs.readFileSync(marker, "utf8");
    const seen = recorded.requests.length;
    const before = replay.requests.length;
    const r = await cli(["replay", dir, "--json"], { OPENAI_BASE_URL: replay.openaiBaseURL, OPENAI_API_KEY: KEY });
    expect(r.code, r.err).toBe(0);
    expect(r.err).toContain("rung 2");
    const j = JSON.parse(r.out);
    expect(j.rung).toBe(2);
    expect(j.diffs).toEqual([]);
    expect(j.actions.map((a: { tool: string; mode: string }) => `${a.tool}[${a.mode}]`)).toEqual([
      "fetch_doc[tape]",
      "fetch_doc[tape]",
      "fetch_doc[tape]",
      "send_email[tape]",
      "send_email[tape]",
    ]);
    expect(j.assumptions.join(" ")).toContain("researcher->executor (substring)");
    const sent = replay.requests.slice(before);
    expect(sent.length).toBe(5);
    expect(sent.every((q) => q.headers.authorization === `Bearer ${KEY}`)).toBe(true);
    expect(recorded.requests.length).toBe(seen);
    expect(fs.readFileSync(marker, "utf8")).toBe(ran);
  });

  it("with the vendor note removed, the diff shows the e-mail to its address gone, and says the rung", async () => {
    const r = await cli(["replay", dir, "--remove", "input:tool:fetch_doc*vendor-note*"], { OPENAI_BASE_URL: replay.openaiBaseURL, OPENAI_API_KEY: KEY });
    expect(r.code, r.err).toBe(0);
    const lines = r.out.split("\n");
    expect(lines[0]).toMatch(
      /^replayed desk \(rung 2: without the program: the recorded requests re-sent, tools from the tape\) without input:tool:fetch_doc\*vendor-note\*: /,
    );
    expect(r.out).toMatch(/differences? from the original/);
    // the executor's second e-mail (to the vendor's address) is not sent in the replay
    expect(r.out).toMatch(/executor action #1: (different|only-in-original)\n\s+original: send_email\([^\n]*vendor-compliance/);
    expect(r.out).not.toMatch(/replay: {3}send_email\([^\n]*vendor-compliance/);
    expect(r.out).toContain("assumes: ");
  });

  it("a run that can't be replayed without the program, with none allowed: exit 2 with why, nothing sent", async () => {
    // an in-process recording: no program named, no request recorded
    const rt = openRun({ out: path.join(tmp, "runs"), runId: "partial" });
    const a = rt.agent("a");
    a.recordDecision({ context: [a.observe("a page", { source: "web", trust: "untrusted" })], output: "ok", model: "m" });
    await rt.finish();
    const before = replay.requests.length;
    const r = await cli(["replay", runDir(rt)!, "--json"], { OPENAI_BASE_URL: replay.openaiBaseURL, OPENAI_API_KEY: KEY });
    expect(r.code).toBe(2);
    expect(JSON.parse(r.out).error).toMatch(/names no program.*not possible either.*no recorded request/);
    expect(replay.requests.length).toBe(before);
  });
});
