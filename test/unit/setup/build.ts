/** Builds the bundles once before the unit tests: the CLI and worker tests run dist/ as users do. */
import { execFileSync } from "node:child_process";
import path from "node:path";

export default function setup(): void {
  execFileSync(process.execPath, [path.resolve(import.meta.dirname, "../../../esbuild.mjs")], { stdio: "inherit" });
}
