/**
 * A collector's run open in the editor takes the test results others added on the collector — a
 * teammate's Run test, a job finished by the team's workers — into its cache folder, so that
 * every window with the run open shows them. The read API has no live tail for tests: the run's
 * row says how many lines the collector holds, and only when it holds more than the cache does the
 * tests file (and the record of who wrote each line) come down.
 *
 * The collector's lines are untrusted data: a chain that fails its check is not taken (the cache
 * keeps what it has and says why), and nothing in a line is run or followed.
 */
import fs from "node:fs";
import path from "node:path";
import { parseTestsLog } from "../../core/log/testslog";
import { saveWriters, type CollectorClient } from "../../core/store/transfer";

/** How often an open collector run asks whether it has new test results (ms). */
export const TESTS_POLL_MS = 3000;

export type RemoteTestsResult = { taken: number } | { skipped: "none-new" | "local-unsent" | "gone" } | { refused: string };

const nonEmptyLines = (buf: Buffer): string[] =>
  buf
    .toString("utf8")
    .split("\n")
    .filter((l) => l.trim() !== "");

function readLocal(file: string): Buffer {
  try {
    return fs.readFileSync(file);
  } catch {
    return Buffer.alloc(0);
  }
}

/**
 * Takes the collector's tests of `runId` into the cached run at `dir` when the collector holds
 * more lines than the `synced` ones the cache shares with it. Left alone when the cache holds
 * results of its own not sent yet: sending them re-chains them onto the collector's head and the
 * cache then takes the collector's chain (extension/collector.ts).
 */
export async function takeRemoteTests(client: CollectorClient, runId: string, dir: string, synced: number): Promise<RemoteTestsResult> {
  const row = await client.getRun(runId);
  if (!row) return { skipped: "gone" };
  if (row.tests <= synced) return { skipped: "none-new" };
  const file = path.join(dir, "tests.jsonl");
  const before = readLocal(file);
  if (nonEmptyLines(before).length !== synced) return { skipped: "local-unsent" };
  const remote = await client.tests(runId);
  const lines = nonEmptyLines(remote).length;
  if (lines <= synced) return { skipped: "none-new" };
  const broken = parseTestsLog(remote).problems.find((p) => p.code === "tests-hash" || p.code === "tests-chain" || p.code === "tests-not-json");
  if (broken) return { refused: `the collector's tests of ${runId} fail their check (${broken.message}); not taken` };
  // a replay here may have written a line meanwhile: then leave it to be sent (and re-chained) first
  if (!readLocal(file).equals(before)) return { skipped: "local-unsent" };
  fs.writeFileSync(`${file}.tmp`, remote);
  fs.renameSync(`${file}.tmp`, file);
  await saveWriters(client, runId, dir, remote);
  return { taken: lines };
}
