// Runs a TypeScript example in this process without a build: `node test/fake-llm/run-example.cjs FILE [ARGS...]`.
// TypeScript is compiled on require (Sucrase) and "causeway-vscode" resolves to this repository's
// core/index.ts, the way the replay loader hands programs the SDK. The example exports main(args).
"use strict";
const path = require("node:path");
require("sucrase/register");
require(path.join(__dirname, "../../core/replay/loader.ts")).installLoader();
const file = path.resolve(process.argv[2]);
const mod = require(file);
Promise.resolve(mod.main(process.argv.slice(3))).then(
  (code) => (process.exitCode = typeof code === "number" ? code : 0),
  (err) => {
    console.error(err && err.stack ? err.stack : String(err));
    process.exitCode = 1;
  },
);
