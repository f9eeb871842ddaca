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
  // `pg` (the PostgreSQL store) is bundled in, so `causeway serve --store postgresql://…` needs no
  // install; its optional native binding is never used.
  { ...node, entryPoints: ["core/cli/main.ts"], outfile: "dist/cli.js", banner: { js: "#!/usr/bin/env node" }, external: ["pg-native"] },
  // The out-of-process replay worker.
  { ...node, entryPoints: ["core/replay/worker.ts"], outfile: "dist/worker.js" },
  // The preload: `node --import causeway-vscode/register` records (and replays) unmodified programs.
  { ...node, entryPoints: ["core/register/preload.ts"], outfile: "dist/register.js" },
  // The library: SDK and core API (package.json "exports").
  { ...node, entryPoints: ["core/index.ts"], outfile: "dist/lib/index.js" },
  // Benchmarks (bench/): `npm run bench`, `npm run bench:calibration`, `npm run bench:replay`.
  { ...node, entryPoints: ["bench/run.ts"], outfile: "dist/bench/run.js" },
  { ...node, entryPoints: ["bench/calibration.ts"], outfile: "dist/bench/calibration.js" },
  { ...node, entryPoints: ["bench/replay.ts"], outfile: "dist/bench/replay.js" },
  { ...node, entryPoints: ["bench/surrogate.ts"], outfile: "dist/bench/surrogate.js" },
  { ...node, entryPoints: ["bench/store.ts"], outfile: "dist/bench/store.js", external: ["pg-native"] },
  { ...node, entryPoints: ["bench/store-agent.ts"], outfile: "dist/bench/store-agent.js" },
  { ...node, entryPoints: ["bench/jobs.ts"], outfile: "dist/bench/jobs.js", external: ["pg-native"] },
  // The investigator webview (browser), also embedded in the static report: webview.js and the
  // webview.css its imports produce (codicons included, the font inlined as a data: URL, since
  // the report's CSP allows fonts only from data:). Type checking: tsc -p webview/tsconfig.json.
  {
    entryPoints: ["webview/main.tsx"],
    outfile: "dist/webview/webview.js",
    bundle: true,
    platform: "browser",
    format: "iife",
    target: "es2022",
    jsx: "automatic",
    jsxImportSource: "preact",
    // Always minified: the same files are inlined into every static report. The source map is a
    // separate file (the report leaves it out).
    sourcemap: production ? false : "linked",
    minify: true,
    legalComments: "none",
    logLevel: "warning",
    loader: { ".ttf": "dataurl" },
  },
  // Cytoscape on its own: loaded by the investigator when it first draws an ungrouped graph
  // (webview/graph/load-cytoscape.ts), embedded inert in the static report.
  {
    entryPoints: ["webview/cytoscape.ts"],
    outfile: "dist/webview/cytoscape.js",
    bundle: true,
    platform: "browser",
    format: "iife",
    target: "es2022",
    sourcemap: production ? false : "linked",
    minify: true,
    legalComments: "none",
    logLevel: "warning",
  },
  // The static report's stand-in for VS Code's theme: every --vscode-* variable the webview uses.
  {
    entryPoints: ["webview/report-theme.css"],
    outfile: "dist/webview/report-theme.css",
    bundle: true,
    minify: production,
    logLevel: "warning",
  },
];

const existing = builds.filter((b) => b.entryPoints.every((e) => fs.existsSync(path.join(root, e))));
if (watch) {
  for (const b of existing) (await esbuild.context(b)).watch();
} else {
  const t0 = Date.now();
  await Promise.all(existing.map((b) => esbuild.build(b)));
  // Codicons are bundled into webview.css now; remove the copies earlier builds left behind.
  for (const f of ["codicon.css", "codicon.ttf"]) fs.rmSync(path.join(root, "dist/webview", f), { force: true });
  console.log(`built ${existing.length} bundles in ${Date.now() - t0} ms${production ? " (production)" : ""}`);
}
