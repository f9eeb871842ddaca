// Builds every bundle of the project. `node esbuild.mjs [--production] [--watch]`.
// Type checking is tsc's job (`npm run typecheck`); esbuild only bundles.
import * as esbuild from "esbuild";
import fs from "node:fs";
import path from "node:path";

const production = process.argv.includes("--production");
const watch = process.argv.includes("--watch");
const root = path.dirname(new URL(import.meta.url).pathname);
const alias = { "causeway-vscode": path.join(root, "core/index.ts") };

const node = {
  bundle: true,
  platform: "node",
  format: "cjs",
  target: "node20",
  sourcemap: true,
  minify: production,
  alias,
  logLevel: "warning",
};

/** @type {esbuild.BuildOptions[]} */
const builds = [
  // The VS Code extension host bundle.
  { ...node, entryPoints: ["extension/extension.ts"], outfile: "dist/extension.js", external: ["vscode"] },
  // The command-line tool (bin.causeway).
  { ...node, entryPoints: ["core/cli/main.ts"], outfile: "dist/cli.js", banner: { js: "#!/usr/bin/env node" } },
  // The out-of-process replay worker.
  { ...node, entryPoints: ["core/replay/worker.ts"], outfile: "dist/worker.js" },
  // The library: SDK and core API (package.json "exports").
  { ...node, entryPoints: ["core/index.ts"], outfile: "dist/lib/index.js" },
  // The investigator webview (browser), also embedded in the static report.
  {
    entryPoints: ["webview/main.tsx"],
    outfile: "dist/webview/webview.js",
    bundle: true,
    platform: "browser",
    format: "iife",
    target: "es2022",
    jsx: "automatic",
    jsxImportSource: "preact",
    sourcemap: production ? false : "inline",
    minify: production,
    logLevel: "warning",
    loader: { ".ttf": "file" },
  },
];

const existing = builds.filter((b) => b.entryPoints.every((e) => fs.existsSync(path.join(root, e))));
if (watch) {
  for (const b of existing) (await esbuild.context(b)).watch();
} else {
  const t0 = Date.now();
  await Promise.all(existing.map((b) => esbuild.build(b)));
  if (fs.existsSync(path.join(root, "node_modules/@vscode/codicons/dist"))) {
    fs.mkdirSync(path.join(root, "dist/webview"), { recursive: true });
    for (const f of ["codicon.css", "codicon.ttf"]) {
      fs.copyFileSync(path.join(root, "node_modules/@vscode/codicons/dist", f), path.join(root, "dist/webview", f));
    }
  }
  console.log(`built ${existing.length} bundles in ${Date.now() - t0} ms${production ? " (production)" : ""}`);
}
