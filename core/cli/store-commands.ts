/**
 * Moving runs between folders and a collector (docs/scale.md):
 *
 *   causeway push DIR… URL [--token T]             send run folders through the collector's checks
 *   causeway pull URL RUN… --out DIR [--token T]   fetch runs, byte for byte, and verify them
 *
 * The token comes from --token or $CAUSEWAY_TOKEN. A refused run prints the collector's reason and
 * the command exits 1.
 */
import path from "node:path";
import { UsageError, type Parsed } from "./args";
import type { Command } from "./command";
import { json, out } from "./format";
import { CollectorClient, TransferError, pullRun, pushRun } from "../store/transfer";

function tokenOf(p: Parsed, cmd: string): string {
  const t = (p.flags.token as string | undefined) ?? process.env.CAUSEWAY_TOKEN;
  if (!t) throw new UsageError(`${cmd}: give the collector's token with --token or $CAUSEWAY_TOKEN`);
  return t;
}

export const STORE_COMMANDS: Record<string, Command> = {
  push: {
    usage: "causeway push DIR… URL [--token T] [--json]",
    help: "send run folders to a collector (every ingest check applies); token from --token or $CAUSEWAY_TOKEN",
    spec: { positionals: ["dir", "url..."], flags: { token: "string", json: "boolean" } },
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
          if (!(err instanceof TransferError)) throw err;
          failed++;
          results.push({ dir: d, ok: false, error: err.message });
          process.stderr.write(`causeway push: ${d}: ${err.message}\n`);
        }
      }
      if (p.flags.json) json(results);
      return failed ? 1 : 0;
    },
  },
  pull: {
    usage: "causeway pull URL RUN… --out DIR [--token T] [--json]",
    help: "fetch runs from a collector into DIR, byte for byte, and verify them",
    spec: { positionals: ["url", "run..."], flags: { token: "string", out: "string", json: "boolean" } },
    run: async (p) => {
      const args = p.all ?? [];
      if (args.length < 2) throw new UsageError("pull: give the collector's URL, then one or more run ids");
      const outDir = p.flags.out as string | undefined;
      if (!outDir) throw new UsageError("pull: --out DIR is required");
      const client = new CollectorClient(args[0], tokenOf(p, "pull"));
      let failed = 0;
      const results: unknown[] = [];
      for (const id of args.slice(1)) {
        try {
          const r = await pullRun(client, id, path.resolve(outDir));
          results.push({ run_id: id, ...r });
          if (!r.ok) {
            failed++;
            process.stderr.write(`causeway pull: ${id} fails verify: ${r.problems[0]}\n`);
          } else if (!p.flags.json) out(`pulled ${id}: ${r.events} events, ${r.blobs} blobs${r.tests ? `, ${r.tests} tests` : ""}${r.foreignTests ? ` (${r.foreignTests} written by others than the run's writer: marked, not counted)` : ""} -> ${r.dir} (verified)`);
        } catch (err) {
          if (!(err instanceof TransferError)) throw err;
          failed++;
          results.push({ run_id: id, ok: false, error: err.message });
          process.stderr.write(`causeway pull: ${id}: ${err.message}\n`);
        }
      }
      if (p.flags.json) json(results);
      return failed ? 1 : 0;
    },
  },
};
