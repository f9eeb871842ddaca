/**
 * A closed stdout or stderr (`causeway verify RUN | head -1`) is not an error of the command: the
 * reader has gone, so output stops quietly and the command exits with the code it would have had.
 * Without this, Node reports EPIPE as an uncaught error (exit 1, a stack trace).
 */
let stdoutClosed = false;

const GONE = new Set(["EPIPE", "ERR_STREAM_DESTROYED", "ECONNRESET"]);

/** Installs the handlers once (the CLI's entry point calls it). */
export function guardStdio(): void {
  for (const s of [process.stdout, process.stderr]) {
    s.on("error", (err: NodeJS.ErrnoException) => {
      if (GONE.has(err?.code ?? "")) {
        if (s === process.stdout) stdoutClosed = true;
        return;
      }
      throw err;
    });
  }
}

/** Writes to stdout unless its reader has gone. */
export function writeOut(text: string): void {
  if (stdoutClosed || process.stdout.destroyed) return;
  try {
    process.stdout.write(text);
  } catch (err) {
    if (GONE.has((err as NodeJS.ErrnoException)?.code ?? "")) stdoutClosed = true;
    else throw err;
  }
}
