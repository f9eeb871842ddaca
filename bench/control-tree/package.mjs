// Packages the control extension (bench/control-tree) as build/control-tree.vsix: the least a tree
// view can do (one row per run folder, listed synchronously, nothing analysed), under Causeway's
// view ids and log lines, so that bench/vscode-runs-list.mjs measures it the same way:
//
//   node bench/control-tree/package.mjs
//   VSIX=build/control-tree.vsix SKIP_PACKAGE=1 SUFFIX=control SCENARIOS=bench/vscode-runs-list.mjs bash test/e2e/run.sh
//
// What it shows: how soon VS Code itself puts 1,000 rows on screen after activating an extension.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

const here = path.dirname(new URL(import.meta.url).pathname);
const root = path.resolve(here, "../..");
const stage = fs.mkdtempSync(path.join(os.tmpdir(), "control-tree-"));
for (const f of ["package.json", "extension.js"]) fs.copyFileSync(path.join(here, f), path.join(stage, f));
fs.mkdirSync(path.join(stage, "media"));
fs.copyFileSync(path.join(root, "media/causeway.svg"), path.join(stage, "media/causeway.svg"));
fs.writeFileSync(path.join(stage, "README.md"), "A control for bench/vscode-runs-list.mjs: a static tree of run folders.\n");
fs.copyFileSync(path.join(root, "LICENSE"), path.join(stage, "LICENSE"));
fs.mkdirSync(path.join(root, "build"), { recursive: true });
const out = path.join(root, "build/control-tree.vsix");
execFileSync(path.join(root, "node_modules/.bin/vsce"), ["package", "--out", out], { cwd: stage, stdio: "inherit" });
fs.rmSync(stage, { recursive: true, force: true });
