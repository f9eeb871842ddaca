/** The status bar item: how many high alerts the workspace's runs have; a click opens Problems. */
import * as vscode from "vscode";
import type { Services } from "./services";

export function registerStatusBar(s: Services): void {
  const item = vscode.window.createStatusBarItem("causeway.alerts", vscode.StatusBarAlignment.Left, 50);
  item.name = vscode.l10n.t("Causeway alerts");
  item.command = { command: "workbench.actions.view.problems", title: vscode.l10n.t("Show Problems") };
  let timer: ReturnType<typeof setTimeout> | undefined;
  const update = () => {
    timer = undefined;
    const runs = s.store.list();
    if (!runs.length) {
      item.hide();
      return;
    }
    let high = 0;
    let review = 0;
    let failed = 0;
    let withHigh = 0;
    for (const e of runs) {
      const a = e.analysis?.summary;
      if (!a) continue;
      high += a.alerts.high;
      review += a.alerts.review;
      if (a.alerts.high) withHigh++;
      if (a.status === "failed") failed++;
    }
    item.text = `$(shield) ${vscode.l10n.t("{0} high", high)}`;
    item.tooltip =
      vscode.l10n.t("Causeway: {0} high and {1} review alerts in {2} of {3} runs", high, review, withHigh, runs.length) +
      (failed ? vscode.l10n.t("; {0} failed verify", failed) : "") +
      vscode.l10n.t(". Click to open the Problems view.");
    item.backgroundColor = high ? new vscode.ThemeColor("statusBarItem.warningBackground") : undefined;
    item.show();
  };
  s.context.subscriptions.push(
    item,
    s.store.onDidChange(() => {
      if (!timer) timer = setTimeout(update, 200);
    }),
    { dispose: () => clearTimeout(timer) },
  );
}
