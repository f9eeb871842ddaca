#!/usr/bin/env node
// The package's `prepare` script: builds dist/ (the bundles, then the type declarations). A clone
// installed into another project before its own dev dependencies are (`npm install
// /path/to/clone`, `npm pack` in a fresh clone) has no build tools yet: they are installed first,
// from the lock file (`npm ci`, whose own prepare then builds), so the one command is enough.
import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import path from "node:path";

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..");
const require = createRequire(path.join(ROOT, "package.json"));

function has(name) {
  try {
    require.resolve(`${name}/package.json`);
    return true;
  } catch {
    return false;
  }
}

/** Runs a command in the clone, its output on stderr (an install's stdout is npm's); exits on failure. */
function run(argv, env = process.env) {
  const r = spawnSync(argv[0], argv.slice(1), { cwd: ROOT, env, stdio: ["ignore", 2, 2] });
  if (r.status !== 0) {
    process.stderr.write(`causeway prepare: ${argv.slice(0, 3).join(" ")} failed (${r.error?.message ?? `exit ${r.status ?? r.signal}`})\n`);
    process.exit(1);
  }
}

if (!has("esbuild") || !has("typescript")) {
  if (process.env.CAUSEWAY_PREPARE_INSTALLING) {
    process.stderr.write("causeway prepare: npm ci did not install esbuild and typescript\n");
    process.exit(1);
  }
  process.stderr.write(`causeway prepare: ${ROOT} has no build tools yet; installing its dev dependencies (npm ci) to build dist/\n`);
  // the outer install's settings (its prefix, save flags, …) are not this clone's
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_config_/i.test(k) || /^npm_config_(cache|registry|userconfig)$/i.test(k)));
  const npmCli = process.env.npm_execpath && /npm-cli\.js$/.test(process.env.npm_execpath) ? [process.execPath, process.env.npm_execpath] : ["npm"];
  run([...npmCli, "ci", "--no-audit", "--no-fund", "--prefer-offline"], { ...env, CAUSEWAY_PREPARE_INSTALLING: "1" });
  process.exit(0); // npm ci ran this script again, with the tools: dist/ is built
}
run([process.execPath, path.join(ROOT, "esbuild.mjs")]);
run([process.execPath, require.resolve("typescript/bin/tsc"), "-p", path.join(ROOT, "tsconfig.types.json")]);
