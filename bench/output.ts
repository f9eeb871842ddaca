/** What the bench programs share: writing a result as JSON + Markdown, and running as a command. */
import fs from "node:fs";
import path from "node:path";

/** Writes `<dir>/<stem>.json` and `<dir>/<stem>.md`; returns the JSON file's path. */
export function writeResult(dir: string, stem: string, result: unknown, markdown: string): string {
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${stem}.json`);
  fs.writeFileSync(file, JSON.stringify(result, null, 1) + "\n");
  fs.writeFileSync(path.join(dir, `${stem}.md`), markdown);
  return file;
}

/** Runs `main(argv)` when the bundle is executed directly; a failure prints its stack and exits 2. */
export function runAsCommand(name: string, mod: NodeJS.Module | undefined, main: (argv: string[]) => Promise<number>): void {
  if (typeof require === "undefined" || require.main !== mod) return;
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (err) => {
      process.stderr.write(`${name}: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      process.exit(2);
    },
  );
}
