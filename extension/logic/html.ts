/** The investigator webview's HTML: the shell that loads the bundle, or a page saying it is missing. */
import { randomBytes } from "node:crypto";

/** A fresh nonce (base64, 128 bits) for each render. */
export function makeNonce(): string {
  return randomBytes(16).toString("base64");
}

export interface ShellParts {
  cspSource: string;
  nonce: string;
  scriptUri: string;
  /** Cytoscape's bundle, loaded by the investigator when it first draws an ungrouped graph. */
  cytoscapeUri: string;
  styleUri: string;
}

export function renderShell(p: ShellParts): string {
  return `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src ${p.cspSource} data:; style-src ${p.cspSource} 'unsafe-inline'; font-src ${p.cspSource} data:; script-src 'nonce-${p.nonce}';"><meta name="viewport" content="width=device-width, initial-scale=1"><link rel="stylesheet" href="${p.styleUri}"><title>Causeway</title></head><body><div id="root"></div><script nonce="${p.nonce}" src="${p.scriptUri}" data-cytoscape="${p.cytoscapeUri}"></script></body></html>`;
}

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);
}

/** Shown when dist/webview/webview.js is not there (a build without the webview). No script. */
export function renderMissing(missing: string): string {
  return `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline';"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Causeway</title><style>body{font-family:var(--vscode-font-family);color:var(--vscode-foreground);padding:1.5em;line-height:1.5}code{font-family:var(--vscode-editor-font-family)}</style></head><body><h2>The investigator is not built</h2><p>This build of Causeway has no investigator bundle (<code>${escapeHtml(missing)}</code> is missing). Build it with <code>npm run build</code> and reload the window. The runs tree, the Problems view, the code lenses and the commands work without it.</p></body></html>`;
}
