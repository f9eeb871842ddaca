// @vitest-environment happy-dom
/** @jsxImportSource preact */
// The investigator shows who wrote each test and lists a call's tests written by someone other
// than the run's writer apart, under a warning, without counting them (core/analysis/foreign.ts):
// a collector run owned by alice, with alice's own test and mallory's claim that the vendor note
// is the primary cause.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { beforeAll, describe, expect, test } from "vitest";
import type { Investigation } from "../../../core/analysis/types";
import { investigate } from "../../../core/analysis/investigate";
import { readRun } from "../../../core/log/reader";
import { appendTest } from "../../../core/log/testslog";
import { WRITERS_FILE, writersText } from "../../../core/log/writers";
import { EXFIL_TARGET } from "../../../core/cli/demo";
import { loadProgram, resolveProgram } from "../../../core/replay/loader";
import { ScriptedHost, VSCODE, mount, step, text, withText } from "./fixture";

const NOTE = "input:vendor:portal/notes.md";
let inv: Investigation;
beforeAll(async () => {
  const DEMO = await loadProgram(resolveProgram("causeway:demo", process.cwd()));
  const dir = (await DEMO.run({ seed: 0, outDir: fs.mkdtempSync(path.join(os.tmpdir(), "cw-wv-foreign-")), runId: "demo-seed0" })).dir!;
  const claim = { target: EXFIL_TARGET, n: 20, p_with: 0.95, p_without: 0.05, ci: [0.7, 1.0], effect: 0.9 };
  appendTest(dir, { ...claim, intervention: "input:inbox:ticket-881", verdict: "ruled-out", effect: 0.0, ci: [-0.1, 0.1], p_without: 0.95 });
  appendTest(dir, { ...claim, intervention: NOTE, verdict: "causal", role: "primary" });
  fs.writeFileSync(path.join(dir, WRITERS_FILE), writersText({ owner: "alice", tests: ["alice", "mallory"] }));
  inv = investigate(readRun(dir));
}, 120_000);

function open() {
  const host = new ScriptedHost(VSCODE, { screen: "why", run: "demo-seed0" });
  const { root } = mount(host);
  host.send({ type: "init", capabilities: VSCODE });
  host.send({ type: "workspace", workspace: { schema: "causeway.workspace.v1", runs: [inv.summary], influence: { sources: [], edges: [] } as never } });
  host.send({ type: "investigation", run: "demo-seed0", investigation: inv });
  step(() => withText(root, ".why-item", "#18")[0].click());
  return root;
}

describe("tests written by others", () => {
  test("are listed apart under a warning naming the writer, and the candidate is not made a cause", () => {
    const root = open();
    const warning = text(root.querySelector(".foreign-tests-warning"));
    expect(warning).toMatch(/1 test of this call was written by someone other than the run's writer \(mallory\)/);
    const row = text(root.querySelector(".foreign-tests tbody tr"));
    expect(row).toContain(NOTE);
    expect(row).toContain("mallory");
    const note = [...root.querySelectorAll(".cand")].find((r) => text(r).includes(NOTE))!;
    expect(note.className).not.toMatch(/status-(primary|contributing|confirmed)/);
    expect(text(note)).not.toContain("mallory");
    // the writer's own test is counted and says who wrote it
    const ticket = [...root.querySelectorAll(".cand")].find((r) => text(r).includes("input:inbox:ticket-881"))!;
    expect(text(ticket)).toContain("by alice");
    expect(inv.summary).toMatchObject({ writer: "alice", foreign_tests: 1, confirmed_causes: 0 });
  });
});
