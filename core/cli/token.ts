/**
 * Where the CLI takes a collector's token from: never argv (`ps` shows every process's command
 * line to every user of the machine). `--token-env VAR` names an environment variable,
 * `--token-file FILE` a file holding the token (its trailing newline dropped), and
 * `$CAUSEWAY_TOKEN` is read when neither is given. `--token VALUE` is refused, naming these.
 */
import fs from "node:fs";
import { UsageError, type Parsed } from "./args";

/** The flags each command taking a token accepts (`token` only to refuse it with the reason). */
export const TOKEN_FLAGS = { token: "string", "token-env": "string", "token-file": "string" } as const;

/** The usage text of those flags. */
export const TOKEN_USAGE = "[--token-env VAR | --token-file FILE]";

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** The token given by --token-env, --token-file or $CAUSEWAY_TOKEN; undefined when none is. */
export function tokenFrom(p: Parsed, cmd: string): string | undefined {
  if (p.flags.token !== undefined) {
    throw new UsageError(
      `${cmd}: --token would put the token on the command line, where \`ps\` shows it to every user of this machine; use --token-env VAR, --token-file FILE or $CAUSEWAY_TOKEN`,
    );
  }
  const envName = p.flags["token-env"] as string | undefined;
  const file = p.flags["token-file"] as string | undefined;
  if (envName !== undefined && file !== undefined) throw new UsageError(`${cmd}: give --token-env or --token-file, not both`);
  if (envName !== undefined) {
    if (!ENV_NAME.test(envName)) throw new UsageError(`${cmd}: --token-env takes the name of an environment variable, got ${JSON.stringify(envName)}`);
    const t = process.env[envName];
    if (!t) throw new UsageError(`${cmd}: --token-env: the environment variable ${envName} is not set`);
    return t;
  }
  if (file !== undefined) {
    let text: string;
    try {
      text = fs.readFileSync(file, "utf8");
    } catch (err) {
      throw new UsageError(`${cmd}: --token-file: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
    }
    const t = text.replace(/\r?\n$/, "");
    if (!t.trim()) throw new UsageError(`${cmd}: --token-file: ${file} is empty`);
    if (/[\r\n]/.test(t)) throw new UsageError(`${cmd}: --token-file: ${file} holds more than one line; it must hold the token alone`);
    return t;
  }
  return process.env.CAUSEWAY_TOKEN || undefined;
}
