/**
 * `causeway replay`: one replay of a run, diffed against the original (each agent's decisions,
 * tool calls and messages, by agent, type and ordinal). With the program allowed it re-runs the
 * program (rung 3); without it, on a run whose full requests were recorded, it re-sends every
 * agent's recorded requests with tools from the tape (rung 2), and says which.
 */
import { type Parsed } from "./args";
import type { Command } from "./command";
import { out, json } from "./output";
import { shown } from "../log/shown";
import { readRun } from "../log/reader";
import { ReplayContext, type Rung } from "../replay/context";
import { replayAndDiff } from "../replay/replay-diff";
import { parseIntervention } from "../specs/grammar";
import type { System } from "../sdk/system";
import { PROGRAM_FLAGS } from "./replay-program";
import { replaySystem, RUNGS_HELP } from "./replay-rung";

const RUNG_WORDS: Record<Rung, string> = {
  1: "one recorded call re-sent",
  2: "without the program: the recorded requests re-sent, tools from the tape",
  3: "the program re-run, tools from the tape",
};

/** The System, with what its last run reported beyond the engine's result (a rung-2 replay's assumptions). */
function watched(sys: System): { sys: System; assumptions: () => string[] } {
  let last: unknown;
  const run = async (o: Parameters<System["run"]>[0]) => {
    const r = await sys.run(o);
    last = (r as { assumptions?: unknown }).assumptions;
    return r;
  };
  const w = Object.create(sys, { run: { value: run } }) as System;
  return { sys: w, assumptions: () => (Array.isArray(last) ? last.map(String) : []) };
}

export function replayCommand(requireRun: (dir: string) => string): Command {
  return {
    usage: "causeway replay RUN [--remove SPEC]... [--seed S] [--allow-program P | --system P | --base-url URL --api-key-env VAR] [--json]",
    help: "replay once from tape and diff against the original (decisions, tool calls, messages); without an allowed program, a run with its full requests recorded is replayed from them (rung 2)",
    details: RUNGS_HELP,
    spec: { positionals: ["run"], flags: { remove: "strings", seed: "number", ...PROGRAM_FLAGS, json: "boolean" } },
    run: async (p: Parsed) => {
      const dir = requireRun(p.pos.run!);
      const remove = (p.flags.remove as string[] | undefined) ?? [];
      remove.forEach(parseIntervention);
      const w = watched(await replaySystem(p, dir));
      const ctx = new ReplayContext(readRun(dir), w.sys);
      const r = await replayAndDiff(ctx, { seed: p.flags.seed as number | undefined, remove });
      const assumptions = w.assumptions();
      if (p.flags.json) return json({ ...r, rung: ctx.rung, ...(assumptions.length ? { assumptions } : {}) });
      out(
        `replayed ${shown(ctx.runId)} (rung ${ctx.rung}: ${RUNG_WORDS[ctx.rung]})${remove.length ? ` without ${remove.map(shown).join(", ")}` : ""}: ${r.actions.map((a) => `${shown(a.tool)}[${a.mode}]`).join(", ") || "no tool calls"}`,
      );
      out(
        r.diffs.length
          ? `${r.diffs.length} difference${r.diffs.length === 1 ? "" : "s"} from the original:`
          : "identical to the original (decisions, tool calls and messages)",
      );
      for (const d of r.diffs)
        out(
          `  ${shown(d.at[0])} ${shown(d.at[1])} #${d.at[2]}: ${shown(d.change)}${d.original ? `\n      original: ${shown(d.original)}` : ""}${d.replay ? `\n      replay:   ${shown(d.replay)}` : ""}`,
        );
      for (const a of assumptions) out(`  assumes: ${shown(a)}`);
    },
  };
}
