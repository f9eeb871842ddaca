/**
 * The job engine: pg-boss (https://github.com/timgit/pg-boss) on the collector's PostgreSQL, in its
 * own schema (`pgboss`). Why pg-boss (docs/scale.md): it needs nothing but the database we already
 * run, its tasks are rows taken with SKIP LOCKED, a task whose worker died is expired and retried
 * (expire_in), a task that fails after its retries goes to a dead-letter queue, and its three
 * dependencies are small; graphile-worker's current release needs Node 22.
 *
 * Two queues: `causeway-drive` (one pass of a job's driver, core/jobs/driver.ts) and
 * `causeway-pairs` (a batch of pairs of one test); `causeway-pairs-dead` takes a batch that failed
 * after its retries, so its job fails with the reason instead of waiting forever.
 */
import PgBoss from "pg-boss";
import { taskId, type PairItem } from "./driver";

export const DRIVE = "causeway-drive";
export const PAIRS = "causeway-pairs";
export const PAIRS_DEAD = "causeway-pairs-dead";

export interface QueueTiming {
  /** A pair batch still active after this is taken to have lost its worker, and retried. */
  pairTimeoutS: number;
  /** The same for a driver pass. */
  driveTimeoutS: number;
  /** How often expired tasks are looked for. */
  maintenanceS: number;
  pollS: number;
}

export const DEFAULT_TIMING: QueueTiming = { pairTimeoutS: 120, driveTimeoutS: 120, maintenanceS: 5, pollS: 0.5 };

/** A started pg-boss with the queues created; errors are logged, never thrown at the process. */
export async function startBoss(url: string, timing: QueueTiming, log: (line: string) => void, supervise = true): Promise<PgBoss> {
  const boss = new PgBoss({ connectionString: url, max: 4, supervise, schedule: false, maintenanceIntervalSeconds: timing.maintenanceS });
  boss.on("error", (err: Error) => log(`job queue: ${err.message}`));
  await boss.start();
  for (const [name, opts] of [
    [PAIRS_DEAD, { name: PAIRS_DEAD, retryLimit: 5, retryDelay: 1 }],
    [PAIRS, { name: PAIRS, retryLimit: 3, retryDelay: 1, expireInSeconds: timing.pairTimeoutS, deadLetter: PAIRS_DEAD }],
    [DRIVE, { name: DRIVE, retryLimit: 10_000, retryDelay: 1, expireInSeconds: timing.driveTimeoutS }],
  ] as const) {
    if (!(await boss.getQueue(name)))
      await boss.createQueue(name, opts).catch(async (err) => {
        if (!(await boss.getQueue(name))) throw err; // another process created it first
      });
  }
  return boss;
}

export interface PairTask {
  job: string;
  items: PairItem[];
}

export const sendDrive = (boss: PgBoss, job: string, timing: QueueTiming = DEFAULT_TIMING): Promise<string | null> =>
  boss.send(DRIVE, { job }, { retryLimit: 10_000, retryDelay: 1, expireInSeconds: timing.driveTimeoutS });

/** Asks for pairs in batches of `batch`, aligned on j so the same pairs asked again are the same task. */
export async function sendPairs(boss: PgBoss, job: string, items: PairItem[], batch: number, timing: QueueTiming): Promise<number> {
  // whole aligned batches: the same pairs asked from another frontier are the same task
  const groups = new Map<string, PairItem[]>();
  for (const it of items) {
    const start = it.j - (it.j % batch);
    const k = JSON.stringify([it.seedBase, it.baseline, it.interventions, start]);
    if (!groups.has(k))
      groups.set(
        k,
        Array.from({ length: batch }, (_, i) => ({ ...it, j: start + i })),
      );
  }
  let sent = 0;
  for (const [k, g] of groups) {
    const id = taskId(job, k, g.map((x) => x.j).join(","));
    const data: PairTask = { job, items: g.sort((a, b) => a.j - b.j) };
    if (await boss.send(PAIRS, data, { id, retryLimit: 3, retryDelay: 1, expireInSeconds: timing.pairTimeoutS })) sent++;
  }
  return sent;
}
