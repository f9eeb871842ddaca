/**
 * A log without run.end: still being written, or cut short? The chain cannot tell (cutting the
 * last lines leaves a valid chain), so the rule looks at what a run being written cannot have:
 *
 * 1. **Tests of it.** tests.jsonl holds replay tests, which are run on a recorded run: a run with
 *    tests had finished, so its missing run.end was cut away.
 * 2. **Blobs of events that are gone.** The writer stores an event's blobs just before it appends
 *    the event, so in a run being written every blob is named by an event, except those of the
 *    event being written now, which are newer than the last change of events.jsonl. A blob that
 *    no event names and that is older than that last change belonged to an event that was cut.
 * 3. **Silence.** events.jsonl has not changed for `staleMs` (default 24 h, or
 *    CAUSEWAY_RUNNING_STALE_HOURS): the program that wrote it is gone.
 *
 * Any of these makes a `truncated` error (verify fails); otherwise the run is "running" (a
 * `no-run-end` warning). What no rule can see: a run whose last event alone (one without blobs,
 * such as run.end itself) was removed a moment ago, without tests; it stays "running" until it is
 * stale.
 */
import fs from "node:fs";
import path from "node:path";
import { refsOf, type LoadedEvent } from "./events";
import { problem, type Problem } from "./problems";

export const DEFAULT_STALE_MS = 24 * 3600 * 1000;

function staleDefault(): number {
  const h = Number(process.env.CAUSEWAY_RUNNING_STALE_HOURS);
  return Number.isFinite(h) && h > 0 ? h * 3600 * 1000 : DEFAULT_STALE_MS;
}

export function runningRule(
  dir: string,
  events: readonly LoadedEvent[],
  tests: number,
  opts: { staleMs?: number; now?: number; orphans?: boolean } = {},
): Problem {
  const at = { file: "events.jsonl" as const };
  if (tests > 0) {
    return problem(
      "truncated",
      `the run has no run.end event, yet tests.jsonl holds ${tests} replay test${tests === 1 ? "" : "s"} of it (tests replay a finished run): its last lines were cut away`,
      at,
    );
  }
  let mtime: number | undefined;
  try {
    mtime = fs.lstatSync(path.join(dir, "events.jsonl")).mtimeMs;
  } catch {
    /* unreadable: reported by the reader */
  }
  if (mtime !== undefined) {
    const named = new Set<string>();
    for (const e of events) for (const r of refsOf(e)) if (typeof r === "string") named.add(r.slice(7));
    let names: string[] = [];
    try {
      names = fs.readdirSync(path.join(dir, "blobs"));
    } catch {
      /* no blobs folder */
    }
    let orphans = 0;
    if (opts.orphans === false) names = [];
    for (const n of names) {
      if (n.length !== 69 || !n.endsWith(".json") || named.has(n.slice(0, 64))) continue;
      try {
        if (fs.lstatSync(path.join(dir, "blobs", n)).mtimeMs < mtime) orphans++;
      } catch {
        /* gone meanwhile */
      }
    }
    if (orphans) {
      return problem(
        "truncated",
        `the run has no run.end event and ${orphans} blob${orphans === 1 ? " is" : "s are"} named by no event though written before the log's last change: the events that named ${orphans === 1 ? "it" : "them"} were cut away`,
        at,
      );
    }
    const stale = opts.staleMs ?? staleDefault();
    const idle = (opts.now ?? Date.now()) - mtime;
    if (idle > stale) {
      return problem(
        "truncated",
        `the run has no run.end event and events.jsonl has not changed for ${(idle / 3600000).toFixed(1)} h: the run was cut short`,
        at,
      );
    }
  }
  return problem("no-run-end", "the run has no run.end event: it is still running, or was cut short", at);
}
