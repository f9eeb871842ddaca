/**
 * The commands (category "Causeway"). Each takes what it is invoked with — a tree node, a
 * { run, seq } from a code lens, a quick fix or the webview — or asks with quick picks when run
 * from the palette. Replays go through ReplayService; nothing here runs agent code.
 */
import * as vscode from "vscode";
import path from "node:path";
import type { ActionView } from "../core/analysis/types";
import { openBlob } from "./blobs";
import { exportReport, importOtelTraces, recordDemo } from "./cli-jobs";
import { interventionSuggestions, targetSuggestions, type Suggestion } from "./logic/replay";
import { oneLine } from "./logic/diagnostics";
import { confirmCost as confirmReplayCost } from "./cost-confirm";
import type { InvestigatorPanel } from "./panel";
import { askInt, pickAction, pickBlob, pickRun } from "./picks";
import type { ReplayService } from "./replay";
import type { RunDiscovery } from "./discovery";
import type { RunsTree } from "./runs-tree";
import type { Recording } from "./record";
import type { EventRef, Services } from "./services";
import { COMMANDS } from "./logic/command-ids";

export interface CommandDeps {
  s: Services;
  tree: RunsTree;
  panel: InvestigatorPanel;
  replay: ReplayService;
  discovery: RunDiscovery;
  recording: Recording;
}

/** { run, seq } from whatever a command was invoked with (tree node, lens/quick-fix argument). */
export function refOf(arg: unknown): EventRef | undefined {
  if (!arg || typeof arg !== "object") return undefined;
  const a = arg as { kind?: unknown; dir?: unknown; run?: unknown; seq?: unknown };
  const run = typeof a.run === "string" ? a.run : typeof a.dir === "string" ? a.dir : undefined;
  if (!run) return undefined;
  const seq = typeof a.seq === "number" && Number.isInteger(a.seq) && a.seq >= 0 ? a.seq : undefined;
  return { run, seq };
}

/**
 * What every command's registration uses: the services and views, and the steps most commands
 * share (registration with error reporting, the run or event a command is about, the cost question).
 */
export interface CommandContext extends CommandDeps {
  /** Registers a command; a failure is logged and shown, never thrown at VS Code. */
  reg(id: string, fn: (...args: unknown[]) => unknown): void;
  /** The ref if its run is in the store. */
  known(ref: EventRef | undefined): EventRef | undefined;
  /** The run (and event) a command is about: its argument, else the tree's selection. */
  current(arg: unknown): EventRef | undefined;
  /** The tool call a command is about: from the argument or the selection, else picked. */
  actionFor(arg: unknown, title: string): Promise<{ run: string; action: ActionView } | undefined>;
  /** Asks before a test estimated above causeway.test.confirmAboveUsd; true to go ahead. */
  confirmCost(run: string, pairs: number, what: string, tests?: number, target?: string): Promise<boolean>;
}

/** Each group registers its commands; a new group is one function here and one line in the list. */
const COMMAND_GROUPS: ((c: CommandContext) => void)[] = [investigatorCommands, testCommands, runCommands, fileCommands, internalCommands];

/** Registers every command of the extension, group by group. */
export function registerCommands(d: CommandDeps): void {
  const c = commandContext(d);
  for (const group of COMMAND_GROUPS) group(c);
}

function commandContext(d: CommandDeps): CommandContext {
  const { s, tree } = d;
  const reg = (id: string, fn: (...args: unknown[]) => unknown) =>
    void s.context.subscriptions.push(
      vscode.commands.registerCommand(id, async (...args: unknown[]) => {
        try {
          return await fn(...args);
        } catch (err) {
          s.log.error(`${id} failed: ${(err as Error)?.stack ?? err}`);
          void vscode.window
            .showErrorMessage(vscode.l10n.t("Causeway: {0}", (err as Error)?.message ?? String(err)), "Show Output")
            .then((p) => p && s.log.show(true));
        }
      }),
    );
  const known = (ref: EventRef | undefined) => (ref && s.store.has(ref.run) ? ref : undefined);
  const current = (arg: unknown) => known(refOf(arg)) ?? known(tree.selection());
  const actionFor = async (arg: unknown, title: string): Promise<{ run: string; action: ActionView } | undefined> => {
    const ref = current(arg);
    const run = ref?.run ?? (await pickRun(s, { title, replayable: true }));
    if (!run) return undefined;
    if (ref?.seq !== undefined) {
      const action = Object.values(s.store.investigation(run)?.actions ?? {}).find((a) => a.seq === ref.seq);
      if (action) return { run, action };
      if (ref.run === run && refOf(arg)?.seq !== undefined) {
        void vscode.window.showInformationMessage(vscode.l10n.t("Causeway: event #{0} of {1} is not a tool call.", ref.seq, path.basename(run)));
        return undefined;
      }
    }
    const action = await pickAction(s, run, title);
    return action ? { run, action } : undefined;
  };
  const confirmCost = (run: string, pairs: number, what: string, tests = 1, target?: string) => confirmReplayCost(s, run, pairs, what, tests, target);

  return { ...d, reg, known, current, actionFor, confirmCost };
}

/** The investigator, on a run or an event. */
function investigatorCommands(c: CommandContext): void {
  const { panel } = c;
  c.reg(COMMANDS.openInvestigator, (arg) => {
    const ref = c.current(arg);
    panel.show(ref?.run, ref?.seq !== undefined ? { seq: ref.seq } : undefined);
  });

  // internal: tree selection, code lens, quick fix → the investigator on that run / event
  c.reg(COMMANDS.reveal, (arg) => {
    const ref = c.known(refOf(arg));
    if (!ref) return;
    const a = arg as { node?: unknown; action?: unknown };
    panel.show(
      ref.run,
      ref.seq !== undefined || typeof a.node === "string"
        ? { seq: ref.seq, node: typeof a.node === "string" ? a.node : undefined, action: a.action === true }
        : undefined,
    );
  });
}

/** Tests and replays: Find the cause, Run test, Replay run. */
function testCommands(c: CommandContext): void {
  const { s, panel, replay } = c;
  c.reg(COMMANDS.findCause, async (arg) => {
    if (!replay.canReplay) return replay.explainRestricted();
    const hit = await c.actionFor(arg, vscode.l10n.t("Find the cause"));
    if (!hit) return;
    const { run, action } = hit;
    const title = vscode.l10n.t("Find the cause of {0} (#{1}, {2})", oneLine(action.tool, 60), action.seq, path.basename(run));
    // an attribution runs a few tests (group, singles): estimate with four at n-max 80 each
    if (!(await c.confirmCost(run, 80, vscode.l10n.t("Find the cause"), 4, action.target))) return;
    const out = await replay.run({ op: "attribute", run, target: action.target }, { title });
    if (!out.ok) return;
    panel.show(run, { seq: action.seq, node: action.node, action: true });
    void vscode.window.showInformationMessage(vscode.l10n.t("Causeway: {0} — {1}", title, oneLine(out.message, 400)));
  });

  c.reg(COMMANDS.runTest, async (arg) => {
    if (!replay.canReplay) return replay.explainRestricted();
    const hit = await c.actionFor(arg, vscode.l10n.t("Run test (1/5): the tool call"));
    if (!hit) return;
    const { run, action } = hit;
    const intervention = await pickSpec(interventionSuggestions(action), {
      title: vscode.l10n.t("Run test (2/5): what to remove"),
      placeHolder: vscode.l10n.t("Remove which input from {0}'s context? (candidate causes of #{1})", action.tool, action.seq),
      otherPrompt: vscode.l10n.t("An intervention: input:SOURCE (globs allowed, e.g. input:vendor:*) or msg:FROM->TO"),
    });
    if (!intervention) return;
    const target = await pickSpec(targetSuggestions(action), {
      title: vscode.l10n.t("Run test (3/5): the target"),
      placeHolder: vscode.l10n.t("Which event counts as the action happening?"),
      otherPrompt: "A target: tool=NAME[,arg~TEXT]",
    });
    if (!target) return;
    const cfg = s.settings();
    const n = await askInt(vscode.l10n.t("Run test (4/5): n"), vscode.l10n.t("Paired replays to run before the first look"), cfg.n, 1);
    if (n === undefined) return;
    const nMax = await askInt(
      vscode.l10n.t("Run test (5/5): n-max"),
      vscode.l10n.t("Most paired replays when the result is not yet decisive"),
      Math.max(cfg.nMax, n),
      n,
    );
    if (nMax === undefined) return;
    const title = vscode.l10n.t("Run test on {0}", path.basename(run));
    if (!(await c.confirmCost(run, nMax, vscode.l10n.t("This test"), 1, target))) return;
    const out = await replay.run({ op: "test", run, intervention, target, n, nMax }, { title });
    if (!out.ok) return;
    panel.show(run, { seq: action.seq, node: action.node, action: true });
    void vscode.window.showInformationMessage(vscode.l10n.t("Causeway: {0} — {1}", title, oneLine(out.message, 400)));
  });

  c.reg(COMMANDS.replayRun, async (arg) => {
    if (!replay.canReplay) return replay.explainRestricted();
    const run = c.current(arg)?.run ?? (await pickRun(s, { title: vscode.l10n.t("Replay run"), replayable: true }));
    if (!run) return;
    const inv = s.store.investigation(run);
    const specs = new Map<string, string>();
    for (const e of inv?.events ?? []) {
      if (e.type === "input" && e.fields.kind !== "task") specs.set(`input:${String(e.fields.source)}`, `${String(e.fields.trust)} input → ${e.agent}`);
      if (e.type === "message") specs.set(`msg:${e.agent}->${String(e.fields.to)}`, "message");
    }
    const picks = await vscode.window.showQuickPick(
      [...specs].map(([spec, what]) => ({ label: oneLine(spec, 120), description: oneLine(what, 80), spec })),
      {
        title: vscode.l10n.t("Replay {0}", path.basename(run)),
        placeHolder: vscode.l10n.t("Remove inputs from every model call's context (pick none to replay as recorded)"),
        canPickMany: true,
      },
    );
    if (!picks) return;
    const out = await replay.run(
      { op: "replay", run, remove: picks.map((p) => p.spec) },
      {
        title: picks.length
          ? vscode.l10n.t("Replay {0} without {1}", path.basename(run), picks.map((p) => p.spec).join(", "))
          : vscode.l10n.t("Replay {0}", path.basename(run)),
      },
    );
    if (!out.ok) return;
    const pick = await vscode.window.showInformationMessage(
      vscode.l10n.t("Causeway: Replay {0} — {1}", path.basename(run), oneLine(out.message, 400)),
      "Show details",
    );
    if (pick) s.log.show(true);
  });
}

/** Whole runs: verify, record, export, import, and the replay key. */
function runCommands(c: CommandContext): void {
  const { s, replay, discovery, panel, recording } = c;
  c.reg(COMMANDS.verifyRun, async (arg) => {
    const run = c.current(arg)?.run ?? (await pickRun(s, { title: vscode.l10n.t("Verify run") }));
    if (!run) return;
    const r = s.store.verify(run)!;
    const name = path.basename(run);
    if (r.ok) {
      s.log.info(`verify ${run}: intact (${r.events} events, every blob checks out)`);
      void vscode.window.showInformationMessage(
        vscode.l10n.t("Causeway: {0} verifies — {1} events, hash chain intact, every blob checks out.", name, r.events),
      );
      return;
    }
    s.log.warn(`verify ${run}: FAILED, ${r.problems.length} problem(s)`);
    for (const p of r.problems) s.log.warn(`  ${p.severity} ${p.code}${p.line ? ` (line ${p.line})` : ""}: ${p.message}`);
    const first = r.first!;
    const open = first.line ? vscode.l10n.t("Open the first bad line") : undefined;
    const pick = await vscode.window.showErrorMessage(
      vscode.l10n.t("Causeway: {0} fails verify: {1}", name, oneLine(first.message, 300)),
      ...(open ? [open] : []),
      vscode.l10n.t("Show all problems"),
    );
    if (pick === open && first.line) await openLine(path.join(run, first.file === "tests.jsonl" ? "tests.jsonl" : "events.jsonl"), first.line);
    else if (pick) s.log.show(true);
  });

  c.reg(COMMANDS.recordDemo, () => recordDemo(s, replay, discovery, panel));
  c.reg(COMMANDS.recordProgram, (arg) => recording.recordProgram(arg));
  c.reg(COMMANDS.addLaunchConfiguration, (arg) => recording.addLaunchConfiguration(arg));
  c.reg(COMMANDS.exportReport, (arg) => exportReport(s, c.current(arg)?.run));
  c.reg(COMMANDS.setReplayApiKey, () => replay.setApiKey());
  c.reg(COMMANDS.importOtel, () => importOtelTraces(s, discovery, panel));
}

/** The run's files: a blob, events.jsonl at an event. */
function fileCommands(c: CommandContext): void {
  const { s } = c;
  c.reg(COMMANDS.openBlob, async (arg) => {
    const a = (arg ?? {}) as { ref?: unknown };
    const ref = c.current(arg);
    const run = ref?.run ?? (await pickRun(s, { title: vscode.l10n.t("Open blob") }));
    if (!run) return;
    const blob = typeof a.ref === "string" ? a.ref : await pickBlob(s, run, ref?.run === run ? ref.seq : undefined);
    if (blob) await openBlob(s, run, blob);
  });

  c.reg(COMMANDS.openEventsFile, async (arg) => {
    const ref = c.current(arg);
    const run = ref?.run ?? (await pickRun(s, { title: vscode.l10n.t("Open events.jsonl") }));
    if (!run) return;
    const line = ref?.seq !== undefined ? s.store.runData(run)?.events.find((e) => e.seq === ref.seq)?.line : undefined;
    await openLine(path.join(run, "events.jsonl"), line ?? 1);
  });
}

/** Internal commands (links, the tree) and the Runs view's buttons. */
function internalCommands(c: CommandContext): void {
  const { s, tree, discovery } = c;
  c.reg(COMMANDS.openLine, (file, line) => (typeof file === "string" ? openLine(file, typeof line === "number" ? line : 1) : undefined));
  c.reg(COMMANDS.revealInTree, (arg) => {
    const ref = c.known(refOf(arg));
    return ref ? tree.reveal(ref.run, ref.seq) : undefined;
  });
  c.reg(COMMANDS.refresh, () => discovery.restart());
  c.reg(COMMANDS.showOutput, () => s.log.show(true));
}

export async function openLine(file: string, line: number): Promise<void> {
  const l = Math.max(0, line - 1);
  await vscode.window.showTextDocument(vscode.Uri.file(file), { selection: new vscode.Range(l, 0, l, 0), preview: true });
}

/** A spec from suggestions, or typed ("Other…"). */
async function pickSpec(suggestions: Suggestion[], o: { title: string; placeHolder: string; otherPrompt: string }): Promise<string | undefined> {
  const OTHER = "\0other";
  const items = [
    ...suggestions.map((x) => ({ label: oneLine(x.label, 200), description: x.description, detail: x.detail, value: x.value })),
    { label: "$(edit) Other…", description: "type a spec", value: OTHER },
  ];
  const pick = await vscode.window.showQuickPick(items, { title: o.title, placeHolder: o.placeHolder, matchOnDescription: true, matchOnDetail: true });
  if (!pick) return undefined;
  if (pick.value !== OTHER) return pick.value;
  const text = await vscode.window.showInputBox({ title: o.title, prompt: o.otherPrompt, validateInput: (t) => (t.trim() ? undefined : "Required") });
  return text?.trim() || undefined;
}
