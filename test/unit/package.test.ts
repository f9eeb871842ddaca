/**
 * The npm package as a user gets it: `npm pack` on a copy of the repository (so its `prepare`
 * script builds the bundles and the type declarations there, as an install from git does), then
 * an offline install of the tarball into a new project, `tsc` over a small program written
 * against the SDK's exported types, and that program run: it records a run the installed CLI
 * verifies.
 */
import { describe, it, expect, beforeAll } from "vitest";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { execFileSync, spawnSync } from "node:child_process";

const ROOT = path.resolve(__dirname, "../..");
const NPM_CLI = process.env.npm_execpath && /npm-cli\.js$/.test(process.env.npm_execpath) ? process.env.npm_execpath : undefined;

function npm(args: string[], cwd: string): { code: number; out: string; err: string } {
  const r = NPM_CLI ? spawnSync(process.execPath, [NPM_CLI, ...args], { cwd, encoding: "utf8" }) : spawnSync("npm", args, { cwd, encoding: "utf8" });
  return { code: r.status ?? -1, out: r.stdout, err: r.stderr };
}

const PROGRAM = `
import { System, ModelOutput, type Runtime, type ModelCall, type ModelFn, type ToolFn, type RunResult } from "causeway-vscode";

// a model function written against the SDK's own types; purpose is a plain string
const llm: ModelFn = (context: unknown[], call: ModelCall) => {
  const purpose: string = call.purpose;
  const order = { tool: "place_order", args: { item: "usb-c hub", qty: context.length } };
  return new ModelOutput(purpose === "order" ? order : "brief", { input_tokens: 3, output_tokens: 2 });
};

const placeOrder: ToolFn = (args: { item: string; qty: number }) => ({ ok: true, item: args.item });

async function program(rt: Runtime): Promise<void> {
  const buyer = rt.agent("buyer", { role: "buys" });
  const page = buyer.observe("Hubs are 20% off this week.", { source: "web:shop", trust: "untrusted" });
  const order = await buyer.decide([rt.taskRef!, page], { model: "llm", purpose: "order" });
  const v = order.value as { args: Record<string, unknown> };
  await buyer.act("place_order", v.args, { decision: order });
}

export const SYSTEM = new System({
  program,
  models: { llm },
  tools: { place_order: placeOrder },
  task: "Buy USB-C hubs.",
  name: "program.ts:SYSTEM",
  sensitiveTools: ["place_order"],
});

if (require.main === module) {
  SYSTEM.run({ seed: 1, outDir: process.argv[2], runId: "consumer-1" }).then((r: RunResult) => {
    process.stdout.write(JSON.stringify({ dir: r.dir, actions: r.actions.map((a) => a.tool) }) + "\\n");
  });
}
`;

describe("the npm package", () => {
  let tmp: string;
  let tarball: string;
  let files: string[];
  let size: number;

  beforeAll(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), "cw-pack-"));
    // a copy of the repository's files (tracked or new, not ignored), with its node_modules linked
    const src = path.join(tmp, "src");
    const list = execFileSync("git", ["ls-files", "-co", "--exclude-standard", "-z"], { cwd: ROOT, encoding: "utf8" }).split("\0").filter(Boolean);
    for (const f of list) {
      const from = path.join(ROOT, f);
      if (!fs.existsSync(from) || !fs.statSync(from).isFile()) continue;
      fs.mkdirSync(path.dirname(path.join(src, f)), { recursive: true });
      fs.copyFileSync(from, path.join(src, f));
    }
    fs.symlinkSync(path.join(ROOT, "node_modules"), path.join(src, "node_modules"), "dir");
    const r = npm(["pack", "--json", "--pack-destination", tmp], src);
    expect(r.code, r.err).toBe(0);
    const j = JSON.parse(r.out) as { filename: string; size: number; files: { path: string }[] }[];
    tarball = path.join(tmp, j[0].filename);
    files = j[0].files.map((f) => f.path);
    size = j[0].size;
  }, 180_000);

  it("holds the library, its types, the CLI and the report's assets, and nothing of the repository's tests or sources", () => {
    for (const f of [
      "dist/lib/index.js",
      "dist/types/core/index.d.ts",
      "dist/types/core/sdk/runtime.d.ts",
      "dist/cli.js",
      "dist/webview/webview.js",
      "dist/webview/cytoscape.js",
      "examples/demo/system.ts",
      "LICENSE",
      "README.md",
      "CHANGELOG.md",
    ]) {
      expect(files, f).toContain(f);
    }
    // every entry point package.json promises (exports, bin) is in the tarball
    const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8")) as {
      exports: Record<string, string | Record<string, string>>;
      bin: Record<string, string>;
    };
    const targets = [...Object.values(pkg.exports).flatMap((t) => (typeof t === "string" ? [t] : Object.values(t))), ...Object.values(pkg.bin)];
    for (const t of targets) expect(files, `entry point ${t}`).toContain(t.replace(/^\.\//, ""));
    const stray = files.filter(
      (f) => /^(test|bench|webview|extension|core|docs|media)\//.test(f) || f.endsWith(".map") || f.startsWith("dist/extension") || f.startsWith("dist/bench"),
    );
    expect(stray).toEqual([]);
    expect(size).toBeLessThan(1.5 * 1024 * 1024);
  });

  it("is what the figures row of bench/README.md says: its file count, and its size to within 10%", () => {
    const readme = fs.readFileSync(path.join(ROOT, "bench/README.md"), "utf8");
    const row = /^\| npm package \(SDK, CLI, types\) \| about (\d+) KB tarball, (\d+) files\b/m.exec(readme);
    expect(row, "the npm package row of bench/README.md").not.toBeNull();
    expect(files.length).toBe(Number(row![2]));
    expect(Math.abs(size / 1024 - Number(row![1])) / Number(row![1])).toBeLessThan(0.1);
  });

  it("installs offline into a new project, type-checks a program against the SDK's types and runs it", () => {
    const proj = path.join(tmp, "consumer");
    fs.mkdirSync(proj);
    fs.writeFileSync(path.join(proj, "package.json"), JSON.stringify({ name: "consumer", version: "1.0.0", private: true }));
    const inst = npm(["install", "--offline", "--no-audit", "--no-fund", tarball], proj);
    expect(inst.code, inst.err).toBe(0);
    fs.writeFileSync(path.join(proj, "program.ts"), PROGRAM);
    // and one misuse, which must fail: the declarations are real types, not `any`
    fs.writeFileSync(path.join(proj, "bad.ts"), `import type { ModelCall } from "causeway-vscode";\nexport const n: number = ({} as ModelCall).purpose;\n`);
    fs.writeFileSync(
      path.join(proj, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          target: "ES2022",
          module: "node16",
          moduleResolution: "node16",
          strict: true,
          outDir: "out",
          // the consumer's own @types/node; here the repository's copy
          typeRoots: [path.join(ROOT, "node_modules/@types")],
          types: ["node"],
        },
        files: ["program.ts", "bad.ts"],
      }),
    );
    const tsc = spawnSync(process.execPath, [path.join(ROOT, "node_modules/typescript/bin/tsc"), "-p", proj], { cwd: proj, encoding: "utf8" });
    const errors = (tsc.stdout + tsc.stderr).trim().split("\n").filter(Boolean);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/^bad\.ts\(2,14\): error TS2322: Type 'string' is not assignable to type 'number'/);

    const runs = path.join(proj, "runs");
    const run = spawnSync(process.execPath, [path.join(proj, "out/program.js"), runs], { cwd: proj, encoding: "utf8" });
    expect(run.status, run.stderr).toBe(0);
    const res = JSON.parse(run.stdout) as { dir: string; actions: string[] };
    expect(res.actions).toEqual(["place_order"]);

    const bin = path.join(proj, "node_modules/.bin/causeway");
    expect(fs.existsSync(bin)).toBe(true);
    const v = spawnSync(process.execPath, [bin, "verify", res.dir, "--json"], { cwd: proj, encoding: "utf8" });
    expect(v.status, v.stderr).toBe(0);
    expect(JSON.parse(v.stdout)).toMatchObject({ ok: true, events: expect.any(Number) });
  }, 300_000);
});
