import { describe, it, expect } from "vitest";
import { makeNonce, renderMissing, renderShell } from "../../../extension/logic/html";

describe("the investigator's HTML", () => {
  it("is the shell with a strict CSP and the bundle loaded by nonce, naming the graph library it loads later", () => {
    const html = renderShell({
      cspSource: "https://x.vscode-cdn.net",
      nonce: "N0nce",
      scriptUri: "https://x/webview.js",
      cytoscapeUri: "https://x/cytoscape.js",
      styleUri: "https://x/webview.css",
    });
    expect(html).toBe(
      `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src https://x.vscode-cdn.net data:; style-src https://x.vscode-cdn.net 'unsafe-inline'; font-src https://x.vscode-cdn.net data:; script-src 'nonce-N0nce';"><meta name="viewport" content="width=device-width, initial-scale=1"><link rel="stylesheet" href="https://x/webview.css"><title>Causeway</title></head><body><div id="root"></div><script nonce="N0nce" src="https://x/webview.js" data-cytoscape="https://x/cytoscape.js"></script></body></html>`,
    );
  });

  it("gets a fresh nonce per render", () => {
    const a = makeNonce();
    expect(a).toMatch(/^[A-Za-z0-9+/]{22}==$/);
    expect(makeNonce()).not.toBe(a);
  });

  it("says plainly when the bundle is missing, with no script at all", () => {
    const html = renderMissing("dist/<webview>/webview.js");
    expect(html).toContain("The investigator is not built");
    expect(html).toContain("dist/&lt;webview&gt;/webview.js");
    expect(html).not.toMatch(/<script/i);
    expect(html).toContain("default-src 'none'");
  });
});
