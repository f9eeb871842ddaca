// Control for bench/vscode-runs-list.mjs: the least a tree view can do. One row per run folder,
// listed synchronously from the runs folder, no analysis, no watchers. Logs what the bench reads.
const vscode = require("vscode");
const fs = require("fs");
const path = require("path");
exports.activate = (context) => {
  const t0 = performance.now();
  const log = vscode.window.createOutputChannel("Causeway", { log: true });
  const root = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  const dir = root && path.join(root, "runs");
  const t1 = performance.now();
  const names = dir && fs.existsSync(dir) ? fs.readdirSync(dir).sort() : [];
  log.info(`found ${names.length} runs in ${(performance.now() - t1).toFixed(0)} ms (control)`);
  let first = true;
  const provider = {
    getChildren: (el) => {
      if (el) return [];
      if (first) {
        first = false;
        log.info(`Runs view: first listing, ${names.length} runs (control; extension host up ${Math.round(process.uptime() * 1000)} ms)`);
        setTimeout(() => log.info(`analysed ${names.length} runs in 0 ms (control)`), 0);
      }
      return names;
    },
    getTreeItem: (name) => {
      const item = new vscode.TreeItem(name, vscode.TreeItemCollapsibleState.Collapsed);
      item.description = "intact · control";
      item.iconPath = new vscode.ThemeIcon("verified");
      return item;
    },
  };
  context.subscriptions.push(log, vscode.window.createTreeView("causeway.runs", { treeDataProvider: provider }));
  context.subscriptions.push(vscode.commands.registerCommand("causeway.showOutput", () => log.show()));
  log.info(`activated in ${(performance.now() - t0).toFixed(1)} ms (control; extension host up ${Math.round(process.uptime() * 1000)} ms)`);
};
exports.deactivate = () => {};
