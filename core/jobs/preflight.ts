/**
 * What the local command refuses before any model call, a job refuses at submit: the collector
 * holds the run, so a job whose target never happened or whose removal, fix or suspect matches
 * nothing in it is answered 400 with the reason, and no job is created (core/jobs/api.ts). The
 * same checks run again at each driver pass (core/jobs/worker.ts), which trusts the database no
 * more than a request.
 */
import type { RunModel } from "../graph/model";
import { targetHits } from "../graph/graph";
import { Refusal, checkFix, checkRemoval, checkTarget } from "../replay/preflight";
import type { JobSpec } from "./spec";

/** Refuses (Refusal) a job that would do nothing on this run, with the local command's words. */
export function checkJob(m: RunModel, spec: JobSpec): void {
  if (spec.kind === "attribute") {
    checkTarget(m, spec.target);
    if (!targetHits(m, spec.target).length)
      throw new Refusal(`the target ${JSON.stringify(spec.target)} did not happen in this run: there is no action to explain`);
    for (const s of spec.suspects ?? []) checkRemoval(m, s);
  } else if (spec.kind === "test") {
    checkTarget(m, spec.target);
    checkFix(m, spec.remove!, "edit");
  } else for (const f of spec.fix ?? []) checkFix(m, f);
}
