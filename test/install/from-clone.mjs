#!/usr/bin/env node
// Installs the package as docs/sdk.md says, from what is committed: a fresh clone (no
// node_modules, no dist/) installed into a new project with `npm install --save-dev
// /path/to/clone`, then `npm pack` in that clone and the tarball installed into another project.
// Each project then runs `npx causeway --help` and imports the SDK. It needs the npm registry (the
// clone's dev dependencies are installed from its lock file) and takes minutes, so it runs once,
// as a stage of the test command, not as a unit test. Any failure exits 1 with the step and its output.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), "../..");
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "causeway-install-"));
const npmCli = process.env.npm_execpath && /npm-cli\.js$/.test(process.env.npm_execpath) ? [process.execPath, process.env.npm_execpath] : ["npm"];
// the settings of an npm running this script are not the new projects'
const env = Object.fromEntries(
  Object.entries(process.env).filter(([k]) => !/^npm_(config|package|lifecycle)_/i.test(k) || /^npm_config_(cache|registry|userconfig)$/i.test(k)),
);

function step(what, argv, cwd) {
  const t = Date.now();
  const r = spawnSync(argv[0], argv.slice(1), { cwd, env, encoding: "utf8", maxBuffer: 64 << 20 });
  const s = ((Date.now() - t) / 1000).toFixed(1);
  if (r.status !== 0) {
    process.stdout.write(
      `INSTALL CHECK FAILED at: ${what} (${argv.join(" ")} in ${cwd}, exit ${r.status ?? r.signal}${r.error ? `, ${r.error.message}` : ""})\n`,
    );
    process.stdout.write(`--- stdout\n${(r.stdout ?? "").slice(-4000)}\n--- stderr\n${(r.stderr ?? "").slice(-8000)}\n`);
    process.stdout.write(`(left for inspection: ${tmp})\n`);
    process.exit(1);
  }
  process.stdout.write(`ok   ${what} (${s} s)\n`);
  return r.stdout;
}

function project(name) {
  const dir = path.join(tmp, name);
  fs.mkdirSync(dir);
  fs.writeFileSync(path.join(dir, "package.json"), JSON.stringify({ name, version: "1.0.0", private: true, type: "module" }, null, 2));
  return dir;
}

/** The installed package works: its CLI answers --help, and the SDK and the core API import. */
function check(dir, how) {
  const help = step(`${how}: npx causeway --help`, [...npmCli, "exec", "--no", "--", "causeway", "--help"], dir);
  if (!/^\s+record\s/m.test(help)) fail(`${how}: causeway --help does not list the record command:\n${help.slice(0, 2000)}`);
  const probe =
    "const m = await import('causeway-vscode'); const missing = ['System', 'Runtime', 'ModelOutput', 'readRun', 'attribute'].filter((n) => typeof m[n] !== 'function'); if (missing.length) { console.error('missing exports: ' + missing.join(', ')); process.exit(1); } console.log('imported');";
  step(`${how}: import the SDK`, [process.execPath, "--input-type=module", "-e", probe], dir);
  if (!fs.existsSync(path.join(dir, "node_modules/causeway-vscode/dist/types/core/index.d.ts"))) fail(`${how}: the type declarations were not installed`);
}

function fail(msg) {
  process.stdout.write(`INSTALL CHECK FAILED: ${msg}\n(left for inspection: ${tmp})\n`);
  process.exit(1);
}

const clone = path.join(tmp, "clone");
step("clone the committed tree", ["git", "clone", "--quiet", "--no-local", ROOT, clone], tmp);
if (fs.existsSync(path.join(clone, "node_modules")) || fs.existsSync(path.join(clone, "dist"))) fail("the clone already has node_modules or dist/");

const linked = project("from-clone");
step("npm install --save-dev /path/to/clone", [...npmCli, "install", "--save-dev", "--no-audit", "--no-fund", clone], linked);
check(linked, "from the clone");

const packed = project("from-tarball");
const tgz = step("npm pack in the clone", [...npmCli, "pack", "--silent", "--pack-destination", tmp], clone)
  .trim()
  .split("\n")
  .pop();
step("npm install the tarball", [...npmCli, "install", "--save-dev", "--no-audit", "--no-fund", "--offline", path.join(tmp, tgz)], packed);
check(packed, "from the tarball");

fs.rmSync(tmp, { recursive: true, force: true });
process.stdout.write("install from a clone and from a tarball: ok\n");
