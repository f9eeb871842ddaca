import { describe, it, expect, beforeAll } from "vitest";
import fs from "node:fs";
import path from "node:path";
import { investigate } from "../../../core/analysis/investigate";
import type { ActionView } from "../../../core/analysis/types";
import { readRun } from "../../../core/log/reader";
import { readTestsLog } from "../../../core/log/testslog";
import { runInWorker } from "../../../core/replay/client";
import {
  buildRequest,
  describeResult,
  interventionSuggestions,
  parseSampleSize,
  replayUnavailableReason,
  targetSuggestions,
} from "../../../extension/logic/replay";
import { ROOT, copyDir, demoWorkspace, tmpDir } from "./helpers";

const settings = { allowed: ["agents/system.ts:SYSTEM"], n: 20, nMax: 160, workers: 2 };
let email: ActionView;
let seed0: string;

beforeAll(async () => {
  seed0 = path.join(await demoWorkspace(), "runs", "demo-seed0");
  email = Object.values(investigate(readRun(seed0)).actions).find((a) => a.seq === 18)!;
});

describe("who may replay what", () => {
  it("turns replays off in an untrusted workspace, with a reason", () => {
    expect(replayUnavailableReason(true)).toBeUndefined();
    expect(replayUnavailableReason(false)).toMatch(/Restricted Mode/);
  });
});

describe("worker requests", () => {
  it("fill n, n-max and workers from the settings unless the job says otherwise", () => {
    const req = buildRequest({ op: "test", run: "/r", intervention: "input:a", target: "tool=x" }, "causeway:demo", "/ws", settings);
    expect(req).toEqual({
      op: "test",
      run: "/r",
      program: "causeway:demo",
      root: "/ws",
      intervention: "input:a",
      target: "tool=x",
      n: 20,
      nMax: 160,
      workers: 2,
    });
    // a workspace program carries the user's approval (program, file, hash), never the settings' list
    const approval = { program: "p.ts:S", file: "/ws/p.ts", sha256: "a".repeat(64), root: "/ws", at: "now" };
    const att = buildRequest({ op: "attribute", run: "/r", target: "tool=x", n: 8, suspects: [] }, "p.ts:S", "/ws", settings, approval);
    expect(att).toMatchObject({
      op: "attribute",
      n: 8,
      nMax: 160,
      suspects: undefined,
      approval: { program: "p.ts:S", file: "/ws/p.ts", sha256: "a".repeat(64) },
    });
    expect(att).not.toHaveProperty("allow");
    expect(buildRequest({ op: "replay", run: "/r", remove: [] }, "p.ts:S", "/ws", settings)).toMatchObject({ op: "replay", remove: undefined });
  });

  it("run Find the cause on the exfiltration email in the worker, which names the vendor note as the primary cause", async () => {
    const dir = copyDir(seed0, path.join(tmpDir(), "runs", "demo-seed0"));
    fs.rmSync(path.join(dir, "tests.jsonl"));
    const req = buildRequest({ op: "attribute", run: dir, target: email.target }, "causeway:demo", path.dirname(path.dirname(dir)), {
      ...settings,
      n: 20,
      nMax: 40,
    });
    const result = (await runInWorker(req, { workerPath: path.join(ROOT, "dist/worker.js"), timeoutMs: 120_000 })) as {
      causes: { spec: string; role: string }[];
    };
    expect(result.causes[0]).toMatchObject({ spec: "input:vendor:portal/notes.md", role: "primary" });
    expect(describeResult("attribute", result)).toMatch(/vendor:portal\/notes\.md/);
    expect(readTestsLog(dir).records.length).toBeGreaterThan(0); // the worker appended the tests
  }, 120_000);
});

describe("Run test suggestions", () => {
  it("suggest removing the email's candidate causes, untested untrusted inputs first, and its own target", () => {
    const s = interventionSuggestions(email);
    expect(s.map((x) => x.value)).toContain("input:vendor:portal/notes.md");
    expect(s[0].picked).toBe(true);
    const t = targetSuggestions(email);
    expect(t[0].value).toBe("tool=send_email,arg~audit@vendor-compliance.example");
    expect(t[1].value).toBe("tool=send_email");
    // a tested candidate says how the test came out
    expect(s.find((x) => x.value === "input:vendor:portal/notes.md")!.detail).toMatch(/^tested: primary cause \(effect \+0\.\d\d/);
  });

  it("describe a test result in one sentence", () => {
    const text = describeResult("test", {
      intervention: "input:v",
      target: "tool=send_email",
      p_with: 0.8,
      p_without: 0,
      effect: 0.8,
      ci: [0.63, 0.9],
      n: 40,
      verdict: "causal",
      role: "primary",
    });
    expect(text).toBe("Removing input:v: tool=send_email happens in 0% of replays instead of 80% — effect +0.80 [+0.63, +0.90], n = 40: CAUSAL (primary).");
  });

  it("accept only whole numbers in range for n and n-max", () => {
    expect(parseSampleSize("20")).toBe(20);
    expect(parseSampleSize(" 7 ")).toBe(7);
    expect(parseSampleSize("0")).toBeUndefined();
    expect(parseSampleSize("2.5")).toBeUndefined();
    expect(parseSampleSize("20001")).toBeUndefined();
  });
});
