/**
 * Where in the user's source an SDK call was made: the first stack frame outside the SDK, as a
 * path relative to the program's root (posix separators) and a 1-based line.
 */
import path from "node:path";
import type { Site } from "../log/events";

const FRAME = /\(?((?:file:\/\/)?[^()\s]+?):(\d+):(\d+)\)?\s*$/;

function frames(stack: string): { file: string; line: number }[] {
  const out: { file: string; line: number }[] = [];
  for (const l of stack.split("\n").slice(1)) {
    const m = FRAME.exec(l);
    if (!m) continue;
    let file = m[1];
    if (file.startsWith("file://")) {
      try {
        file = decodeURIComponent(new URL(file).pathname);
      } catch {
        continue;
      }
    }
    out.push({ file, line: Number(m[2]) });
  }
  return out;
}

let sdkFile: string | undefined;
let sdkDir: string | undefined;

function locateSelf(): void {
  if (sdkFile !== undefined) return;
  const f = frames(new Error().stack ?? "")[0];
  sdkFile = f?.file ?? "";
  // Unbundled (tests, or the SDK loaded from source): every file of core/ counts as the SDK.
  const i = sdkFile.replace(/\\/g, "/").lastIndexOf("/core/sdk/");
  sdkDir = i >= 0 ? sdkFile.slice(0, i + "/core/".length) : undefined;
}

/** True for frames that belong to the SDK, Node itself or a bundler's runtime. */
function isInternal(file: string): boolean {
  if (file === sdkFile) return true;
  if (sdkDir && file.startsWith(sdkDir)) return true;
  if (file.startsWith("node:") || file.startsWith("internal/")) return true;
  if (/[\\/]node_modules[\\/](vitest|@vitest|vite|tinypool|sucrase|pirates)[\\/]/.test(file)) return true;
  return false;
}

/** The caller's site, relative to `root`; undefined when no frame outside the SDK is found. */
export function captureSite(root: string): Site | undefined {
  locateSelf();
  const saved = Error.stackTraceLimit;
  Error.stackTraceLimit = 30;
  const stack = new Error().stack ?? "";
  Error.stackTraceLimit = saved;
  for (const f of frames(stack)) {
    if (isInternal(f.file)) continue;
    if (!path.isAbsolute(f.file)) continue;
    const rel = path.relative(root, f.file).split(path.sep).join("/");
    return { file: rel, line: f.line };
  }
  return undefined;
}
