/** What one CLI command is: its usage line, a one-line help, its arguments and its handler. */
import type { CommandSpec, Parsed } from "./args";

export type Handler = (p: Parsed) => Promise<number | void> | number | void;

export interface Command {
  spec: CommandSpec;
  usage: string;
  help: string;
  /** More lines for `--help` only (a table: lines starting with "|"). */
  details?: string;
  run: Handler;
}

/** The flag every command takes: print one JSON value (or one `{error, code}` object) on stdout. */
export const JSON_FLAG = { json: "boolean" } as const;
