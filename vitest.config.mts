import { defineConfig } from "vitest/config";
import path from "node:path";

export default defineConfig({
  // the webview's tests are TSX for Preact (the root tsconfig, which esbuild reads here, has no JSX settings)
  esbuild: { jsx: "automatic", jsxImportSource: "preact" },
  resolve: {
    alias: { "causeway-vscode": path.resolve(import.meta.dirname, "core/index.ts") },
  },
  test: {
    include: ["test/unit/**/*.test.ts", "test/unit/**/*.test.tsx", "examples/**/*.test.ts"],
    environment: "node",
    // a bound on hangs, not a speed check: a loaded machine must not fail a correct build
    testTimeout: 300_000,
    hookTimeout: 300_000,
    pool: "forks",
    // two files at a time on the 2-core CI machine: most tests wait on child processes (replayed
    // programs, servers), so the second worker uses the time the first spends waiting (the whole
    // suite: 6.2 min instead of about 20 with vitest's default of one worker here)
    maxWorkers: 2,
    globalSetup: ["test/unit/setup/build.ts"],
  },
});
