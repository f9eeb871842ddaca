/** Quick picks shared by the commands: a run, a tool call of a run, a blob of a run. */
import * as vscode from "vscode";
import path from "node:path";
import type { ActionView } from "../core/analysis/types";
import { alertCounts, compareRuns } from "./logic/tree";
import { oneLine } from "./logic/diagnostics";
import type { Services } from "./services";

interface Item<T> extends vscode.QuickPickItem {
  value: T;
}

export interface PickOptions {
  title: string;
  placeHolder?: string;
  /** Only runs that recorded a program (replayable). */
  replayable?: boolean;
}

/** A run of the workspace; runs with high alerts first. */
export async function pickRun(s: Services, o: PickOptions): Promise<string | undefined> {
  const entries = s.store.list().filter((e) => !o.replayable || !!e.analysis?.program || !!e.analysis?.agentless);
  if (!entries.length) {
    void vscode.window.showInformationMessage(
      o.replayable
        ? vscode.l10n.t("Causeway: no replayable runs in this workspace (none recorded a program or its full model requests).")
        : vscode.l10n.t("Causeway: no runs in this workspace. Record the demo to get some."),
    );
    return undefined;
  }
  const items: Item<string>[] = entries
    .sort((a, b) => (b.analysis?.summary.alerts.high ?? 0) - (a.analysis?.summary.alerts.high ?? 0) || compareRuns(a.dir, b.dir))
    .map((e) => {
      const sum = e.analysis?.summary;
      return {
        label: path.basename(e.dir),
        description: sum
          ? [sum.status === "failed" ? "failed verify" : sum.status, alertCounts(sum.alerts), oneLine(sum.program, 60)].filter(Boolean).join(" · ")
          : "not read yet",
        detail: path.relative(e.root, e.dir) || e.dir,
        value: e.dir,
      };
    });
  const pick = await vscode.window.showQuickPick(items, {
    title: o.title,
    placeHolder: o.placeHolder ?? vscode.l10n.t("Pick a run"),
    matchOnDescription: true,
    matchOnDetail: true,
  });
  return pick?.value;
}

/** A tool call of the run; calls with alerts first. */
export async function pickAction(s: Services, run: string, title: string): Promise<ActionView | undefined> {
  const inv = s.store.investigation(run);
  const actions = Object.values(inv?.actions ?? {});
  if (!actions.length) {
    void vscode.window.showInformationMessage(vscode.l10n.t("Causeway: {0} has no tool calls.", path.basename(run)));
    return undefined;
  }
  const rank = (a: ActionView) => (a.alerts.includes("high") ? 0 : a.alerts.includes("review") ? 1 : a.sensitive ? 2 : 3);
  const items: Item<ActionView>[] = actions
    .sort((a, b) => rank(a) - rank(b) || a.seq - b.seq)
    .map((a) => ({
      label: oneLine(a.tool, 60),
      description: [`#${a.seq}`, oneLine(a.agent, 40), a.alerts.length ? a.alerts.join(", ") : "", a.blocked ? "blocked" : "", a.sensitive ? "sensitive" : ""]
        .filter(Boolean)
        .join(" · "),
      detail: oneLine(a.args, 160),
      value: a,
    }));
  const pick = await vscode.window.showQuickPick(items, {
    title,
    placeHolder: vscode.l10n.t("Pick a tool call"),
    matchOnDescription: true,
    matchOnDetail: true,
  });
  return pick?.value;
}

/** A blob the run's events (or one event, `seq`) name, labelled by the event; the only one without asking. */
export async function pickBlob(s: Services, run: string, seq?: number): Promise<string | undefined> {
  const data = s.store.runData(run);
  if (!data) return undefined;
  const items: Item<string>[] = [];
  const seen = new Set<string>();
  for (const e of data.events) {
    if (seq !== undefined && e.seq !== seq) continue;
    for (const [k, what] of [
      ["ref", e.type === "input" ? `input ${String(e.source)}` : `message to ${String(e.to)}`],
      ["args_ref", `${String(e.tool)} arguments`],
      ["result_ref", `${String(e.tool)} result`],
      ["output", "model output"],
    ] as const) {
      const ref = e[k];
      if (typeof ref !== "string" || !/^sha256:[0-9a-f]{64}$/.test(ref) || seen.has(ref)) continue;
      seen.add(ref);
      items.push({ label: oneLine(what, 80), description: `#${e.seq} · ${oneLine(String(e.agent), 40)}`, detail: ref, value: ref });
    }
  }
  if (!items.length) {
    void vscode.window.showInformationMessage(
      seq === undefined ? vscode.l10n.t("Causeway: {0} names no blobs.", path.basename(run)) : vscode.l10n.t("Causeway: event #{0} names no blobs.", seq),
    );
    return undefined;
  }
  if (seq !== undefined && items.length === 1) return items[0].value;
  const pick = await vscode.window.showQuickPick(items, {
    title: vscode.l10n.t("Open blob — {0}", path.basename(run)),
    placeHolder: vscode.l10n.t("Pick a value"),
    matchOnDescription: true,
    matchOnDetail: true,
  });
  return pick?.value;
}

/** A positive integer from an input box, with a default. */
export async function askInt(title: string, prompt: string, value: number, min: number): Promise<number | undefined> {
  const text = await vscode.window.showInputBox({
    title,
    prompt,
    value: String(value),
    validateInput: (t) => (/^\d+$/.test(t.trim()) && Number(t) >= min && Number(t) <= 10000 ? undefined : `A whole number from ${min} to 10000`),
  });
  return text === undefined ? undefined : Number(text.trim());
}
