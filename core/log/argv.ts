/**
 * Command lines as text: one canonical way to write an argv as a single string (what a run
 * records in `run.start.program`, what `--allow-program` takes and what the extension shows),
 * its exact inverse, shell-safe quoting for the flags the CLI suggests, and the redaction of
 * secrets passed as command-line flags before a command line is recorded or printed.
 */
import { REDACTED, redactQuery } from "./redact";

/**
 * A word written without quotes: one a POSIX shell reads as itself (nothing to expand, split or
 * glob), or such a word around the redaction marker, kept visible as `--api-key=[redacted]` (a
 * glob of no consequence: whatever a shell makes of it, the secret is not there).
 */
const PLAIN = /^(?:[A-Za-z0-9_@%+=:,./-]|\[redacted\])+$/;

/** `s` single-quoted for a POSIX shell (an embedded `'` becomes `'\''`): pasting it expands nothing. */
export function singleQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** One word of a command line: as is when a shell reads it as itself, else single-quoted. */
export function shellWord(s: string): string {
  return PLAIN.test(s) ? s : singleQuote(s);
}

/** The canonical command line of an argv (`node agent.mjs --name 'a b'`); parseCommand inverts it. */
export function formatCommand(argv: readonly string[]): string {
  return argv.map(shellWord).join(" ");
}

/**
 * The argv of a command line written by formatCommand (or typed the same way: words split on
 * spaces, single quotes, a backslash outside quotes escapes one character). Nothing is expanded:
 * `$`, `*`, `;`, double quotes are plain characters. Throws on an unterminated quote.
 */
export function parseCommand(line: string): string[] {
  const out: string[] = [];
  let cur = "";
  let inWord = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (c === "'") {
      const end = line.indexOf("'", i + 1);
      if (end < 0) throw new Error(`unterminated quote in ${JSON.stringify(line)}`);
      cur += line.slice(i + 1, end);
      i = end;
      inWord = true;
    } else if (c === "\\" && i + 1 < line.length) {
      cur += line[++i];
      inWord = true;
    } else if (c === " " || c === "\t" || c === "\n") {
      if (inWord) out.push(cur);
      cur = "";
      inWord = false;
    } else {
      cur += c;
      inWord = true;
    }
  }
  if (inWord) out.push(cur);
  return out;
}

/** Flag names whose value is a credential: --api-key, --token, --openai-api-key, --password, -p is not. */
const SECRET_FLAG =
  /^--?(?:[\w-]*[-_])?(?:api[-_]?key|apikey|key|token|access[-_]?token|auth[-_]?token|auth|authorization|secret|client[-_]?secret|password|passwd|credentials?|bearer|private[-_]?key|sig|signature)$/i;
/** Environment-style assignments (`env OPENAI_API_KEY=… node …`) whose name is a credential's. */
const SECRET_NAME = /(?:^|_)(?:API_?KEY|APIKEY|KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?|AUTH|SIG|SIGNATURE)(?:_|$)/i;
/** Names that hold a path, not a secret (SSH_AUTH_SOCK, GOOGLE_APPLICATION_CREDENTIALS_FILE, …). */
const PATH_NAME = /_(?:SOCK|PATH|DIR|FILE|HOME)$/i;
/** Shapes of well-known API keys, wherever they appear in an argument. */
const KEY_SHAPES =
  /\b(?:sk-(?:ant-|proj-)?[A-Za-z0-9_-]{16,}|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|xox[abprs]-[A-Za-z0-9-]{10,}|AKIA[0-9A-Z]{16}|AIza[0-9A-Za-z_-]{30,})/g;
/** URL user info (`https://user:pass@host`). */
const USERINFO = /(\b[a-z][a-z0-9+.-]*:\/\/)[^/@\s:]+:[^/@\s]+@/gi;

/** The values of credential-looking environment variables (8 characters or more), longest first. */
function envSecrets(env: NodeJS.ProcessEnv): string[] {
  const vals: string[] = [];
  // a value that is a path (the working directory, a socket, a key file's name) is not the secret itself
  for (const [k, v] of Object.entries(env))
    if (v && v.length >= 8 && SECRET_NAME.test(k) && !PATH_NAME.test(k) && !/^(?:\/|~\/|\.\.?\/|[A-Za-z]:\\)/.test(v)) vals.push(v);
  return vals.sort((a, b) => b.length - a.length);
}

function scrub(a: string, secrets: readonly string[]): string {
  let s = a;
  for (const v of secrets) if (s.includes(v)) s = s.split(v).join(REDACTED);
  // credential query parameters inside an argument (a URL with ?key=…): the recorders' own scanner
  return redactQuery(s.replace(KEY_SHAPES, REDACTED)).replace(USERINFO, `$1${REDACTED}@`);
}

/**
 * The argv with secrets replaced by `[redacted]`, visibly: the value of a credential flag
 * (`--api-key=[redacted]`, `--token [redacted]`), of a credential assignment
 * (`OPENAI_API_KEY=[redacted]`), credential query parameters and URL passwords, well-known key
 * shapes, and any value of a credential-looking environment variable.
 */
export function redactArgv(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): string[] {
  const secrets = envSecrets(env);
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const eq = a.indexOf("=");
    if (a.startsWith("-") && eq > 0 && SECRET_FLAG.test(a.slice(0, eq))) out.push(`${a.slice(0, eq)}=${REDACTED}`);
    else if (a.startsWith("-") && SECRET_FLAG.test(a) && i + 1 < argv.length) {
      out.push(a, REDACTED);
      i++;
    } else if (!a.startsWith("-") && eq > 0 && /^[A-Za-z_][A-Za-z0-9_]*$/.test(a.slice(0, eq)) && SECRET_NAME.test(a.slice(0, eq)))
      out.push(`${a.slice(0, eq)}=${REDACTED}`);
    else out.push(scrub(a, secrets));
  }
  return out;
}
