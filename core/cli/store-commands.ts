/**
 * Moving runs between folders and a collector (docs/scale.md):
 *
 *   causeway push DIR… URL             send run folders through the collector's checks
 *   causeway pull URL RUN… --out DIR   fetch runs, byte for byte, and verify them
 *
 * The token comes from --token-env VAR, --token-file FILE or $CAUSEWAY_TOKEN (never argv: see
 * ./token.ts). A refused run prints the collector's reason and the command exits 1; so does a
 * collector that cannot be read (a redirect, an answer that is not the read API's), in one line.
 */
import path from "node:path";
import { UsageError, type Parsed } from "./args";
import type { Command } from "./command";
import { err as errLine, json, out } from "./output";
import { TOKEN_FLAGS, TOKEN_USAGE, tokenFrom } from "./token";
import { CollectorClient, TransferError, pullRun, pushRun } from "../store/transfer";

function tokenOf(p: Parsed, cmd: string): string {
  const t = tokenFrom(p, cmd);
  if (!t) throw new UsageError(`${cmd}: give the collector's token with --token-env VAR, --token-file FILE or $CAUSEWAY_TOKEN`);
  return t;
}

/** One line for any failure of one run's transfer: a TransferError's reason, or what went wrong reading the answer. */
const reasonOf = (err: unknown): string =>
  err instanceof TransferError ? err.message : `the collector's answer could not be read (${(err as Error)?.message ?? String(err)})`;

export const STORE_COMMANDS: Record<string, Command> = {
  push: {
    usage: `causeway push DIR… URL ${TOKEN_USAGE} [--json]`,
    help: "send run folders to a collector (every ingest check applies); token from --token-env, --token-file or $CAUSEWAY_TOKEN",
    spec: { positionals: ["dir", "url..."], flags: { ...TOKEN_FLAGS, json: "boolean" } },
    run: async (p) => {
      const args = p.all ?? [];
      if (args.length < 2) throw new UsageError("push: give one or more run folders, then the collector's URL");
      const url = args[args.length - 1];
      if (!/^https?:\/\//i.test(url)) throw new UsageError(`push: the last argument must be the collector's URL, got ${JSON.stringify(url)}`);
      const client = new CollectorClient(url, tokenOf(p, "push"));
      let failed = 0;
      const results: unknown[] = [];
      for (const d of args.slice(0, -1)) {
        try {
          const r = await pushRun(path.resolve(d), client);
          results.push({ dir: d, ok: true, ...r });
          if (!p.flags.json) out(`pushed ${r.runId}: ${r.sent} events${r.skipped ? ` (${r.skipped} already held)` : ""}${r.tests ? `, ${r.tests} tests` : ""}`);
        } catch (err) {
          failed++;
          results.push({ dir: d, ok: false, error: reasonOf(err) });
          errLine(`causeway push: ${d}: ${reasonOf(err)}`);
        }
      }
      if (p.flags.json) json(results);
      return failed ? 1 : 0;
    },
  },
  pull: {
    usage: `causeway pull URL RUN… --out DIR ${TOKEN_USAGE} [--json]`,
    help: "fetch runs from a collector into DIR, byte for byte, and verify them",
    spec: { positionals: ["url", "run..."], flags: { ...TOKEN_FLAGS, out: "string", json: "boolean" } },
    run: async (p) => {
      const args = p.all ?? [];
      if (args.length < 2) throw new UsageError("pull: give the collector's URL, then one or more run ids");
      const outDir = p.flags.out as string | undefined;
      if (!outDir) throw new UsageError("pull: --out DIR is required");
      let client: CollectorClient;
      try {
        client = new CollectorClient(args[0], tokenOf(p, "pull"));
      } catch (err) {
        if (err instanceof TransferError) throw new UsageError(`pull: ${err.message}`);
        throw err;
      }
      let failed = 0;
      const results: unknown[] = [];
      for (const id of args.slice(1)) {
        try {
          const r = await pullRun(client, id, path.resolve(outDir));
          results.push({ run_id: id, ...r });
          if (!r.ok) {
            failed++;
            errLine(`causeway pull: ${id} fails verify: ${r.problems[0]}`);
          } else if (!p.flags.json)
            out(
              `pulled ${id}: ${r.events} events, ${r.blobs} blobs${r.tests ? `, ${r.tests} tests` : ""}${r.foreignTests ? ` (${r.foreignTests} written by others than the run's writer: marked, not counted)` : ""} -> ${r.dir} (verified)`,
            );
        } catch (err) {
          failed++;
          results.push({ run_id: id, ok: false, error: reasonOf(err) });
          errLine(`causeway pull: ${id}: ${reasonOf(err)}`);
        }
      }
      if (p.flags.json) json(results);
      return failed ? 1 : 0;
    },
  },
};
