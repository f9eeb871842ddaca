/**
 * The replay context a worker replays a job's pairs in: the seeded-model cache is the job's
 * (`causeway_job_cache`, loaded before a task and shared with every worker); what the task
 * computes is kept in `fresh`, for the worker to store (core/jobs/cache.ts says how).
 */
import type { RunData } from "../log/reader";
import { ReplayContext } from "../replay/context";
import type { ModelCache } from "../sdk/runtime-options";
import type { System } from "../sdk/system";
import type { CacheEntry } from "./cache";

/**
 * A replay context whose seeded-model cache is the job's (loaded from the table before a task,
 * shared with every worker): what it computes is kept in `fresh`, for the worker to store.
 */
export class SharedCacheContext extends ReplayContext {
  readonly fresh: [string, CacheEntry][] = [];
  constructor(run: RunData, system: System, map: Map<string, CacheEntry>) {
    super(run, system, { cache: false });
    if (system.seededModels) {
      const cache: ModelCache = { get: (k) => map.get(k), set: (k, v) => (map.set(k, v), void this.fresh.push([k, v])) };
      (this as { modelCache: ModelCache | undefined }).modelCache = cache;
    }
  }
}
