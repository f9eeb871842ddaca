import * as vscode from "vscode";

// Placeholder entry: replaced by the real extension (runs tree, diagnostics, lenses, commands).
export function activate(context: vscode.ExtensionContext): void {
  const tree: vscode.TreeDataProvider<string> = {
    getTreeItem: (s) => new vscode.TreeItem(s),
    getChildren: () => [],
  };
  context.subscriptions.push(vscode.window.registerTreeDataProvider("causeway.runs", tree));
}

export function deactivate(): void {}
