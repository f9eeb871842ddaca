/**
 * Loads Cytoscape (dist/webview/cytoscape.js, built from webview/cytoscape.ts) the first time a
 * graph needs it. In VS Code the shell names the file's webview URI on the investigator's script
 * (data-cytoscape); in the static report its text is embedded after the data, as a script the
 * browser does not run (type="text/plain", id causeway-cytoscape). Either way it runs as a script
 * carrying the page's nonce, which the Content Security Policy requires.
 */
import type cytoscape from "cytoscape";

export type Cytoscape = typeof cytoscape;

declare global {
  interface Window {
    /** Set by dist/webview/cytoscape.js when it runs. */
    __causewayCytoscape?: Cytoscape;
  }
}

/** The element whose id names the report's embedded Cytoscape. */
export const EMBEDDED_ID = "causeway-cytoscape";

// The investigator's own script, while it runs (afterwards document.currentScript is null).
const self = typeof document === "undefined" ? null : (document.currentScript as HTMLScriptElement | null);

let loading: Promise<Cytoscape> | undefined;

/** Cytoscape if it has been loaded already. */
export function cytoscapeLoaded(): Cytoscape | undefined {
  return window.__causewayCytoscape;
}

/** Cytoscape, loaded once; a failed load is tried again on the next call. */
export function loadCytoscape(): Promise<Cytoscape> {
  const have = cytoscapeLoaded();
  if (have) return Promise.resolve(have);
  loading ??= load().catch((err: unknown) => {
    loading = undefined;
    throw err;
  });
  return loading;
}

async function load(): Promise<Cytoscape> {
  const host = self ?? document.querySelector<HTMLScriptElement>("script[nonce]");
  const script = document.createElement("script");
  // the nonce is hidden from the attribute once the page has loaded, but kept in the property
  script.nonce = host?.nonce ?? "";
  const src = host?.dataset.cytoscape;
  if (src) {
    script.src = src;
    await new Promise<void>((resolve, reject) => {
      script.onload = () => resolve();
      script.onerror = () => reject(new Error(`the graph library could not be loaded (${src})`));
      document.head.appendChild(script);
    });
  } else {
    // the report: the text follows the investigator's script; wait until the browser has parsed it
    if (document.readyState === "loading") await new Promise((resolve) => document.addEventListener("DOMContentLoaded", resolve, { once: true }));
    const text = document.getElementById(EMBEDDED_ID)?.textContent;
    if (!text) throw new Error("this page has no graph library (no dist/webview/cytoscape.js was built into it)");
    script.textContent = text;
    document.head.appendChild(script); // an inline script runs as it is inserted
  }
  const cy = cytoscapeLoaded();
  if (!cy) throw new Error("the graph library ran but did not register itself");
  return cy;
}
