/**
 * Replacement texts a job carries. Locally `replace:ITEM=@FILE` reads a file on the machine that
 * runs the command; a job never names a file (the collector and the workers read none), so the
 * submitting command sends the file's text in the job's `texts` and names it by its sha256:
 * `replace:ITEM=@text:HEX`. The text is exact (an inline `=TEXT` loses the spaces and newlines at
 * its ends, which the grammar trims), and the name chooses nothing but a text the job itself holds.
 *
 * Processes that parse jobs' specs (the collector, `causeway worker`) set {@link jobTextReader} as
 * their spec file reader: it answers only `text:HEX` names it was given, never the disk.
 */
import { createHash } from "node:crypto";

const NAME = /^text:([0-9a-f]{64})$/;
const known = new Map<string, string>();

/** The name a text goes by in a job's specs. */
export const textName = (text: string): string => `text:${createHash("sha256").update(text, "utf8").digest("hex")}`;

/** Makes a job's texts readable by their names (content-addressed: any job's texts may share the map). */
export function registerTexts(texts: readonly string[] | undefined): void {
  for (const t of texts ?? []) {
    if (known.size > 10_000) known.clear();
    known.set(textName(t).slice(5), t);
  }
}

/** The spec file reader of a process that parses jobs: a registered text by its name, nothing else. */
export function jobTextReader(name: string): string {
  const m = NAME.exec(name);
  if (!m) throw new Error("a job names no file: only a text it carries (text:SHA256)");
  const t = known.get(m[1]);
  if (t === undefined) throw new Error("the job carries no such text");
  return t;
}
