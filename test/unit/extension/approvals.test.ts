/**
 * The extension's replay approvals (logic/approvals.ts): only a stored approval of the same
 * program, file and sha256 replays without asking; the question shows the full command, the
 * absolute file and its hash; a changed file asks again; a settings value approves nothing; a run
 * whose command is not the one it names, or a built-in carrying a command, never reaches a prompt.
 */
import { afterAll, describe, expect, it } from "vitest";
import fs from "node:fs";
import path from "node:path";
import { readRun } from "../../../core/log/reader";
import { sha256File } from "../../../core/replay/approval";
import { approvalState, decidePermit, parseApprovals, withApproval, type StoredApproval } from "../../../extension/logic/approvals";
import { craftRun, made, tmp } from "../security/crafted";

afterAll(() => {
  for (const d of made) fs.rmSync(d, { recursive: true, force: true });
});

function workspace(): { ws: string; file: string } {
  const ws = tmp("cw-approve-");
  fs.writeFileSync(path.join(ws, "agent.mjs"), "console.log(1);\n");
  return { ws, file: path.join(ws, "agent.mjs") };
}

const stored = (program: string, file: string, sha256: string, root: string): StoredApproval => ({ program, file, sha256, root, at: "2026-12-04T00:00:00Z" });

describe("deciding a replay in the extension", () => {
  it("asks for a new program with the full command, the absolute file and its sha256; then runs it silently", () => {
    const { ws, file } = workspace();
    const run = readRun(craftRun(path.join(ws, "runs", "r"), "node agent.mjs", ["node", "agent.mjs"]));
    const d = decidePermit("node agent.mjs", ws, run, [], false);
    expect(d.kind).toBe("ask");
    if (d.kind !== "ask") return;
    const sha = sha256File(file);
    expect(d.approval).toEqual({ program: "node agent.mjs", file, sha256: sha });
    expect(d.message).toBe("Allow Causeway to run node agent.mjs for replays?");
    expect(d.detail).toContain(`Command: node agent.mjs\nRuns in: ${ws}\nProgram file: ${file}`);
    expect(d.detail).toContain(`sha256: ${sha}`);
    const again = decidePermit("node agent.mjs", ws, run, [stored("node agent.mjs", file, sha, ws)], false);
    expect(again).toEqual({ kind: "run", approval: { program: "node agent.mjs", file, sha256: sha } });
  });

  it("asks again when the file changed, naming both hashes", () => {
    const { ws, file } = workspace();
    const run = readRun(craftRun(path.join(ws, "runs", "r"), "node agent.mjs", ["node", "agent.mjs"]));
    const before = sha256File(file);
    fs.appendFileSync(file, "// changed\n");
    const d = decidePermit("node agent.mjs", ws, run, [stored("node agent.mjs", file, before, ws)], false);
    expect(d.kind).toBe("ask");
    if (d.kind !== "ask") return;
    expect(d.message).toBe(`${file} changed since you allowed it. Allow Causeway to run it for replays?`);
    expect(d.detail).toContain(`sha256: ${sha256File(file)}`);
    expect(d.detail).toContain(`Allowed before with sha256: ${before}`);
  });

  it("a program listed in the settings is still asked about, and the question says why", () => {
    const { ws } = workspace();
    const run = readRun(craftRun(path.join(ws, "runs", "r"), "node agent.mjs", ["node", "agent.mjs"]));
    const d = decidePermit("node agent.mjs", ws, run, [], true);
    expect(d.kind).toBe("ask");
    expect(d.kind === "ask" && d.detail).toMatch(/causeway\.allowedPrograms lists it, but a settings value cannot approve code/);
  });

  it("refuses, without asking, a run whose recorded command is not the one it names", () => {
    const { ws, file } = workspace();
    const run = readRun(craftRun(path.join(ws, "runs", "r"), "node agent.mjs", ["/bin/sh", "-c", "touch MARKER"]));
    const d = decidePermit("node agent.mjs", ws, run, [stored("node agent.mjs", file, sha256File(file), ws)], true);
    expect(d).toEqual({
      kind: "refuse",
      reason: expect.stringContaining(`names the program "node agent.mjs" but records the command "/bin/sh -c 'touch MARKER'"`),
    });
  });

  it("a built-in name needs no approval, whatever command the run carries (the worker loads the built-in module)", () => {
    const { ws } = workspace();
    const run = readRun(craftRun(path.join(ws, "runs", "r"), "causeway:demo", ["/bin/sh", "-c", "touch MARKER"]));
    expect(decidePermit("causeway:demo", ws, run, [], false)).toEqual({ kind: "run" });
  });

  it("resolves a module against the workspace folder, not the folder beside the run", () => {
    const { ws } = workspace();
    const bundle = path.join(ws, "downloads", "bundle");
    fs.mkdirSync(path.join(bundle, "agents"), { recursive: true });
    fs.writeFileSync(path.join(bundle, "agents/x.cjs"), "exports.SYSTEM = 1;\n");
    const run = readRun(craftRun(path.join(bundle, "runs", "r"), "agents/x.cjs:SYSTEM"));
    expect(decidePermit("agents/x.cjs:SYSTEM", ws, run, [], false)).toEqual({
      kind: "refuse",
      reason: `the program agents/x.cjs:SYSTEM is not in this workspace folder (looked for ${path.join(ws, "agents/x.cjs")})`,
    });
  });
});

describe("stored approvals", () => {
  it("keep one approval per program and file, and drop malformed entries", () => {
    const a = stored("node a.mjs", "/ws/a.mjs", "a".repeat(64), "/ws");
    const b = stored("node a.mjs", "/ws/a.mjs", "b".repeat(64), "/ws");
    expect(withApproval([a], b)).toEqual([b]);
    expect(parseApprovals([a, { program: "x" }, null, { ...a, sha256: "short" }])).toEqual([a]);
    const plan = { kind: "command" as const, program: "node a.mjs", argv: ["node", "a.mjs"], file: "/ws/a.mjs", root: "/ws" };
    expect(approvalState(plan, [a], "a".repeat(64)).status).toBe("approved");
    expect(approvalState(plan, [a], "c".repeat(64)).status).toBe("changed");
    expect(approvalState({ ...plan, file: "/other/a.mjs" }, [a], "a".repeat(64)).status).toBe("ask");
  });
});
