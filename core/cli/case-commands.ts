/**
 * `causeway fix-check` and `causeway case`; their text output, and that of `attribute --spans /
 * --shapes`, is in case-output.ts.
 */
import fs from "node:fs";
import path from "node:path";
import { intFlag, UsageError, type Parsed } from "./args";
import type { Command } from "./command";
import { out, json } from "./output";
import { readRun } from "../log/reader";
import { RunModel } from "../graph/model";
import { checkFix } from "../replay/preflight";
import { ReplayContext } from "../replay/context";
import { attribute } from "../replay/attribute";
import { fixCheck } from "../replay/fixcheck";
import { narrowAttribution } from "../replay/narrow";
import { buildCase, caseMarkdown } from "../report/case";
import { PAIRS_HELP, pairsOf } from "./pairs";
import { parseIntervention, parseTarget } from "../specs/grammar";
import type { System } from "../sdk/system";
import { PROGRAM_FLAGS } from "./replay-program";
import { checkRungScope, RUNGS_HELP } from "./replay-rung";
import { TOKEN_FLAGS } from "./token";
import { submitToCollector } from "./job-commands";
import { formatFixCheck } from "./case-output";

/** The System a replay runs (replay-rung.ts); the targets let it fall back to the one call that made the action (rung 1). */
type ProgramFor = (p: Parsed, runDir: string, targets?: string | readonly string[]) => Promise<System>;

/** A replace:…=@FILE spec with the file made absolute (replays may run elsewhere). */
export function absoluteSpec(spec: string): string {
  const m = /^(replace:[^=]*=@)(.+)$/s.exec(spec.trim());
  return m ? m[1] + path.resolve(m[2]) : spec;
}

/** `fix-check RUN_ID --collector URL`: the same checks of the flags, then a job on the team's workers. */
async function fixCheckOnCollector(p: Parsed): Promise<number> {
  if (!((p.flags.fix as string[] | undefined) ?? []).length)
    throw new UsageError("fix-check: --fix SPEC is required (e.g. span:input:notes@87-229, guard:block, replace:input:system=@clean.txt)");
  if (!p.flags.harm) throw new UsageError("fix-check: --harm TARGET is required");
  return submitToCollector(p, "fix-check");
}

export function caseCommands(programFor: ProgramFor, requireRun: (d: string) => string): Record<string, Command> {
  return {
    "fix-check": {
      usage:
        "causeway fix-check RUN --fix SPEC [--fix SPEC]... --harm TARGET [--keep TARGET]... [--n N] [--n-max N] [--allow-program P | --system P | --base-url URL --api-key-env VAR | --collector URL] [--json]",
      help: `replay with a fix applied: harm rate without → with it, and whether intended actions still happen. Each test: ${PAIRS_HELP} (default: first look at 40, at most 160)`,
      details: RUNGS_HELP,
      spec: {
        positionals: ["run"],
        flags: {
          fix: "strings",
          harm: "string",
          keep: "strings",
          n: "number",
          "n-max": "number",
          workers: "number",
          ...PROGRAM_FLAGS,
          collector: "string",
          ...TOKEN_FLAGS,
          json: "boolean",
        },
      },
      run: async (p) => {
        if (p.flags.collector) return fixCheckOnCollector(p);
        const dir = requireRun(p.pos.run!);
        const fixes = ((p.flags.fix as string[] | undefined) ?? []).map(absoluteSpec);
        if (!fixes.length)
          throw new UsageError("fix-check: --fix SPEC is required (e.g. span:input:notes@87-229, guard:block, replace:input:system=@clean.txt)");
        fixes.forEach(parseIntervention);
        const harm = p.flags.harm as string | undefined;
        if (!harm) throw new UsageError("fix-check: --harm TARGET is required");
        parseTarget(harm);
        const keep = p.flags.keep as string[] | undefined;
        keep?.forEach(parseTarget);
        const run = readRun(dir);
        const model = new RunModel(run);
        // a fix that changes nothing is refused before any model call
        for (const f of fixes) checkFix(model, f);
        const sys = await programFor(p, dir, harm);
        checkRungScope(sys, fixes);
        const ctx = new ReplayContext(run, sys);
        const { n, nMax } = pairsOf(p, { n: 40, nMax: (k) => Math.max(160, k) });
        const f = await fixCheck(ctx, { fix: fixes, harm, keep, n, nMax, workers: intFlag(p, "workers", 1) });
        if (p.flags.json)
          json({ ...f, harm: { ...f.harm, test: undefined, n: f.harm.test.n }, keep: f.keep.map((k) => ({ ...k, test: undefined, n: k.test.n })) });
        else formatFixCheck(f).forEach((l) => out(l));
        return f.verdict === "fixed" ? 0 : 1;
      },
    },
    case: {
      usage: "causeway case RUN --target SPEC [-o FILE.md] [--investigate [--allow-program P | --system P | --base-url URL --api-key-env VAR]] [--json]",
      help: "the case file of one action: cause, causing span, shapes, fix checks, path, every figure linked to the log",
      details: RUNGS_HELP,
      spec: {
        positionals: ["run"],
        flags: { target: "string", "out-file": "string", investigate: "boolean", n: "number", "n-max": "number", ...PROGRAM_FLAGS, json: "boolean" },
        aliases: { o: "out-file" },
      },
      run: async (p) => {
        const dir = requireRun(p.pos.run!);
        const target = p.flags.target as string | undefined;
        if (!target) throw new UsageError("case: --target SPEC is required");
        parseTarget(target);
        if (p.flags.investigate) {
          // Find the cause, then its span and shapes, recorded to tests.jsonl first
          const sys = await programFor(p, dir, target);
          const ctx = new ReplayContext(readRun(dir), sys);
          const { n, nMax, minPairs } = pairsOf(p, { n: 10, nMax: (k) => Math.max(80, k) });
          const a = await attribute(ctx, { target, n, nMax, minPairs });
          await narrowAttribution(ctx, a, { n, nMax });
        }
        const file = p.flags["out-file"] as string | undefined;
        const from = file ? path.dirname(path.resolve(file)) : process.cwd();
        const c = buildCase(readRun(dir, { checkBlobs: true }), { target, from });
        if (p.flags.json) return json(c);
        const md = caseMarkdown(c);
        if (file) {
          fs.mkdirSync(from, { recursive: true });
          fs.writeFileSync(path.resolve(file), md);
          out(`case: ${path.resolve(file)} (${c.evidence.length} links to the run; ${c.headline})`);
        } else out(md);
      },
    },
  };
}
