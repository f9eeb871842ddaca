/**
 * Replay runs exactly what the user approved (issue 27, item 1). Crafted runs try to make
 * `causeway replay` and the extension's worker start a process or load a file the user did not
 * approve; each attack would create a marker file, and no marker may appear.
 */
import { afterAll, describe, expect, it } from "vitest";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { runInWorker } from "../../../core/replay/client";
import { sha256File } from "../../../core/replay/approval";
import type { WorkerRequest } from "../../../core/replay/worker-protocol";
import { ROOT, cli, craftRun, made, systemSource, tmp } from "./crafted";

const WORKER = path.join(ROOT, "dist/worker.js");

afterAll(() => {
  for (const d of made) fs.rmSync(d, { recursive: true, force: true });
});

/** A project folder with a harmless agent.mjs (the program the user means to allow). */
function project(): { dir: string; marker: string } {
  const dir = tmp();
  fs.writeFileSync(path.join(dir, "agent.mjs"), "console.log('the real agent');\n");
  return { dir, marker: path.join(dir, "MARKER") };
}

const touch = (marker: string) => `require("fs").writeFileSync(${JSON.stringify(marker)}, "pwned")`;

describe("a run naming the built-in demo but carrying its own command", () => {
  it("causeway replay loads the built-in module and never spawns the command", () => {
    const { dir, marker } = project();
    const run = craftRun(path.join(dir, "runs", "crafted"), "causeway:demo", ["/bin/sh", "-c", `touch ${marker}`]);
    expect(cli(["verify", run], dir).code).toBe(0); // the crafted run is well-formed
    const r = cli(["replay", run, "--json"], dir);
    expect(fs.existsSync(marker)).toBe(false);
    expect(r.err).toContain("causeway: replaying with the built-in program causeway:demo");
    expect(r.err).not.toContain("/bin/sh");
  });

  it("the extension's worker does the same", async () => {
    const { dir, marker } = project();
    const run = craftRun(path.join(dir, "runs", "crafted"), "causeway:demo", ["node", "-e", touch(marker)]);
    await runInWorker({ op: "replay", run, program: "causeway:demo", root: dir }, { workerPath: WORKER, timeoutMs: 60_000 }).catch((e) => e);
    expect(fs.existsSync(marker)).toBe(false);
  });
});

describe("a run under an allowed command name whose recorded command differs", () => {
  const attacks: [string, (p: { dir: string; marker: string }) => string[]][] = [
    ["sh -c", ({ marker }) => ["/bin/sh", "-c", `touch ${marker}`]],
    ["env X=1 node", ({ marker }) => ["env", "X=1", "node", "-e", touch(marker)]],
    [
      "node --require X",
      ({ dir, marker }) => {
        fs.writeFileSync(path.join(dir, "evil.cjs"), touch(marker) + ";\n");
        return ["node", "--require", "./evil.cjs", "agent.mjs"];
      },
    ],
    [
      "an absolute path",
      ({ marker }) => {
        const elsewhere = tmp("cw-sec-evil-");
        fs.writeFileSync(path.join(elsewhere, "agent.mjs"), touch(marker).replace('require("fs")', "(await import('node:fs'))") + ";\n");
        return [path.join(elsewhere, "agent.mjs")];
      },
    ],
  ];
  for (const [name, command] of attacks) {
    it(`${name}: causeway replay refuses, naming both, and runs nothing`, () => {
      const p = project();
      const cmd = command(p);
      const run = craftRun(path.join(p.dir, "runs", "crafted"), "node agent.mjs", cmd);
      const r = cli(["replay", run, "--allow-program", "node agent.mjs", "--json"], p.dir);
      expect(r.code).toBe(2);
      expect(r.err).toContain('the run names the program "node agent.mjs" but records the command');
      expect(r.err).toContain(cmd[0]);
      // with --json, stdout holds the error alone
      expect(JSON.parse(r.out)).toEqual({ error: expect.stringContaining("records the command"), code: 2 });
      expect(fs.existsSync(p.marker)).toBe(false);
    });

    it(`${name}: the worker refuses it under an approval of node agent.mjs, and runs nothing`, async () => {
      const p = project();
      const run = craftRun(path.join(p.dir, "runs", "crafted"), "node agent.mjs", command(p));
      const file = path.join(p.dir, "agent.mjs");
      // `allow` is the allow-list the worker of before honoured: the attack is tried on it too
      const req = {
        op: "replay",
        run,
        program: "node agent.mjs",
        root: p.dir,
        approval: { program: "node agent.mjs", file, sha256: sha256File(file) },
        allow: ["node agent.mjs"],
      } as WorkerRequest;
      const err = await runInWorker(req, { workerPath: WORKER, timeoutMs: 60_000 }).catch((e) => e);
      expect(err).toMatchObject({ kind: "not-allowed" });
      expect((err as Error).message).toMatch(/names the program "node agent\.mjs" but records the command/);
      expect(fs.existsSync(p.marker)).toBe(false);
    });
  }

  it("a command the run names consistently still needs that exact string: another allowed name runs nothing", () => {
    const p = project();
    const run = craftRun(path.join(p.dir, "runs", "crafted"), `/bin/sh -c 'touch ${p.marker}'`, ["/bin/sh", "-c", `touch ${p.marker}`]);
    const r = cli(["replay", run, "--allow-program", "node agent.mjs"], p.dir);
    expect(r.code).toBe(2);
    expect(r.err).toContain("--allow-program 'node agent.mjs' is not it");
    expect(r.err).toContain("replaying runs the command /bin/sh -c");
    expect(fs.existsSync(p.marker)).toBe(false);
  });

  it("the worker refuses a program it has no approval for, and an approval of another file", async () => {
    const p = project();
    const run = craftRun(path.join(p.dir, "runs", "crafted"), "node agent.mjs", ["node", "agent.mjs"]);
    fs.writeFileSync(path.join(p.dir, "agent.mjs"), touch(p.marker) + ";\n");
    const none = await runInWorker({ op: "replay", run, program: "node agent.mjs", root: p.dir }, { workerPath: WORKER, timeoutMs: 60_000 }).catch((e) => e);
    expect(none).toMatchObject({ kind: "not-allowed" });
    const other = path.join(tmp(), "agent.mjs");
    fs.writeFileSync(other, "");
    const wrong = await runInWorker(
      { op: "replay", run, program: "node agent.mjs", root: p.dir, approval: { program: "node agent.mjs", file: other, sha256: sha256File(other) } },
      { workerPath: WORKER, timeoutMs: 60_000 },
    ).catch((e) => e);
    expect(wrong).toMatchObject({ kind: "not-allowed" });
    expect((wrong as Error).message).toContain(path.join(p.dir, "agent.mjs"));
    expect(fs.existsSync(p.marker)).toBe(false);
  });
});

describe("a program file is looked for where the user approved it, never beside the run", () => {
  it("the bundle's own agents/x.cjs does not load; the one in the working directory does, and stderr names it", () => {
    const proj = tmp();
    fs.mkdirSync(path.join(proj, "agents"));
    fs.writeFileSync(path.join(proj, "agents/x.cjs"), systemSource());
    const rec = cli(["record", "agents/x.cjs:SYSTEM", "--out", "runs", "--run-id", "mine", "--json"], proj);
    expect(rec.code, rec.err).toBe(0);
    // a downloaded bundle inside the project: its own agents/x.cjs and a run naming that program
    const bundle = path.join(proj, "downloads", "bundle");
    const marker = path.join(proj, "MARKER");
    fs.mkdirSync(path.join(bundle, "agents"), { recursive: true });
    fs.writeFileSync(path.join(bundle, "agents/x.cjs"), systemSource(marker));
    fs.cpSync(path.join(proj, "runs", "mine"), path.join(bundle, "runs", "theirs"), { recursive: true });
    const r = cli(["replay", path.join(bundle, "runs", "theirs"), "--allow-program", "agents/x.cjs:SYSTEM", "--json"], proj);
    expect(r.code, r.err).toBe(0);
    expect(fs.existsSync(marker)).toBe(false);
    const own = path.join(proj, "agents/x.cjs");
    expect(r.err).toContain(`causeway: replaying with ${own} (export SYSTEM, sha256 ${sha256File(own)})`);
    expect(JSON.parse(r.out)).toHaveProperty("diffs"); // stdout holds the result alone
  });

  it("a pinned hash that is not the file's refuses before loading", () => {
    const proj = tmp();
    const marker = path.join(proj, "MARKER");
    fs.mkdirSync(path.join(proj, "agents"));
    fs.writeFileSync(path.join(proj, "agents/x.cjs"), systemSource());
    expect(cli(["record", "agents/x.cjs:SYSTEM", "--out", "runs", "--run-id", "mine"], proj).code).toBe(0);
    fs.writeFileSync(path.join(proj, "agents/x.cjs"), systemSource(marker));
    const r = cli(["replay", "runs/mine", "--allow-program", "agents/x.cjs:SYSTEM", "--program-sha256", "0".repeat(64)], proj);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/changed since it was approved \(approved sha256 0{64}, now [0-9a-f]{64}\)/);
    expect(fs.existsSync(marker)).toBe(false);
  });
});

describe("the flags the CLI suggests are single-quoted", () => {
  /** What a POSIX shell makes of `--allow-program HINT` pasted: the argument it passes on. */
  const pasted = (hint: string, cwd: string) => spawnSync("/bin/sh", ["-c", `printf %s ${hint}`], { cwd, encoding: "utf8" }).stdout;

  for (const program of ["agents/$(touch MARKER).cjs:SYSTEM", "it's $(touch MARKER) `touch MARKER`:SYSTEM"]) {
    it(`a program named ${JSON.stringify(program)}: pasting the hint expands nothing`, () => {
      const dir = tmp();
      const run = craftRun(path.join(dir, "runs", "crafted"), program);
      const r = cli(["replay", run], dir);
      expect(r.code).toBe(2);
      const hint = /pass --allow-program (.*) \(or --system/.exec(r.err)?.[1];
      expect(hint, r.err).toBeDefined();
      expect(pasted(hint!, dir)).toBe(program);
      expect(fs.existsSync(path.join(dir, "MARKER"))).toBe(false);
    });
  }

  it("a recorded command's hint: the same", () => {
    const dir = tmp();
    const program = "node agent.mjs '$(touch MARKER)'";
    const run = craftRun(path.join(dir, "runs", "crafted"), program, ["node", "agent.mjs", "$(touch MARKER)"]);
    const r = cli(["replay", run], dir);
    expect(r.code).toBe(2);
    const hint = /pass --allow-program (.*) \(or --system/.exec(r.err)?.[1];
    expect(pasted(hint!, dir)).toBe(program);
    expect(fs.existsSync(path.join(dir, "MARKER"))).toBe(false);
  });
});
