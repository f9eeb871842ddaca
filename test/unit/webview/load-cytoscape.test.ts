// @vitest-environment happy-dom
// Cytoscape is loaded only when a graph needs it (webview/graph/load-cytoscape.ts). A page without
// it gets an error that says so, and a later call tries again. (happy-dom runs no script: that the
// report's embedded Cytoscape runs, under the page's CSP, is checked in Chromium by
// test/browser/report.test.mjs, and the VS Code webview's by e2e 31.)
import { afterEach, describe, expect, test } from "vitest";
import { EMBEDDED_ID, loadCytoscape } from "../../../webview/graph/load-cytoscape";

afterEach(() => {
  delete window.__causewayCytoscape;
  document.getElementById(EMBEDDED_ID)?.remove();
  for (const s of document.head.querySelectorAll("script")) s.remove();
});

describe("loading Cytoscape", () => {
  test("a page with no graph library says so, and the next call tries again", async () => {
    await expect(loadCytoscape()).rejects.toThrow(/no graph library/);
    const fake = (() => null) as unknown as NonNullable<Window["__causewayCytoscape"]>;
    window.__causewayCytoscape = fake;
    await expect(loadCytoscape()).resolves.toBe(fake);
  });
});
