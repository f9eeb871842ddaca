// Builds build/causeway.vsix from a staging folder (build/vsix/).
//
// The same package.json serves npm (the SDK and the CLI, whose tarball is chosen by its "files"
// list) and vsce (the extension). vsce refuses a package.json with "files" next to a
// .vscodeignore, and the two packages need different contents, so the extension is packaged from
// a copy: the files .vscodeignore's "!" lines name, and a package.json without the npm-only
// fields. .vscodeignore stays the one list of what goes into the .vsix.
//
// The README inside the .vsix keeps its relative links (--no-rewrite-relative-links: there is no
// public repository to point them at); the images it shows are shipped in the .vsix, so VS Code's
// extension page resolves them against the installed extension.
import fs from "node:fs";
import path from "node:path";
import { execFileSync } from "node:child_process";

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..");
const stage = path.join(root, "build", "vsix");
const out = path.join(root, "build", "causeway.vsix");

/** The files a `!dir/pattern` line names (a `*` only in the last segment, as .vscodeignore says). */
function matches(pattern) {
  const dir = path.posix.dirname(pattern);
  const base = path.posix.basename(pattern);
  const re = new RegExp("^" + base.replace(/[.+?^${}()|[\]\\]/g, "\\$&").replace(/\*/g, "[^/]*") + "$");
  const abs = path.join(root, dir);
  if (!fs.existsSync(abs)) return [];
  return fs
    .readdirSync(abs, { withFileTypes: true })
    .filter((e) => e.isFile() && re.test(e.name))
    .map((e) => path.posix.join(dir === "." ? "" : dir, e.name));
}

const ignore = fs.readFileSync(path.join(root, ".vscodeignore"), "utf8");
const patterns = ignore
  .split(/\r?\n/)
  .map((l) => l.trim())
  .filter((l) => l.startsWith("!"))
  .map((l) => l.slice(1));

fs.rmSync(stage, { recursive: true, force: true });
fs.mkdirSync(stage, { recursive: true });
const missing = [];
for (const p of patterns) {
  if (p === "package.json") continue;
  const files = matches(p);
  if (!files.length && !p.includes("*")) missing.push(p);
  for (const f of files) {
    fs.mkdirSync(path.join(stage, path.dirname(f)), { recursive: true });
    fs.copyFileSync(path.join(root, f), path.join(stage, f));
  }
}
if (missing.length) {
  console.error(`package-vsix: .vscodeignore names files that do not exist: ${missing.join(", ")}`);
  process.exit(1);
}
fs.copyFileSync(path.join(root, ".vscodeignore"), path.join(stage, ".vscodeignore"));

const pkg = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8"));
for (const k of ["files", "scripts", "devDependencies", "allowScripts"]) delete pkg[k];
fs.writeFileSync(path.join(stage, "package.json"), JSON.stringify(pkg, null, 2) + "\n");

const vsce = path.join(root, "node_modules", "@vscode", "vsce", "vsce");
execFileSync(process.execPath, [vsce, "package", "--no-dependencies", "--no-rewrite-relative-links", "--allow-missing-repository", "--out", out], {
  cwd: stage,
  stdio: "inherit",
});
