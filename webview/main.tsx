/**
 * Boots the investigator. In the static report the data is embedded in the page
 * (<script type="application/json" id="causeway-data">) and a ReportHost answers from it; inside
 * VS Code a VscodeHost talks to the extension. Either way the same app mounts into #root.
 */
import { render } from "preact";
import "./styles.css";
import { App } from "./components/App";
import type { Investigation, RunGraph, Workspace } from "../core/analysis/types";
import { ReportHost, VscodeHost, type Host, type ReportRun, type ReportSource } from "./host";
import { Controller } from "./state";

/**
 * The report's embedded data (core/report/report.ts dataElements): an index (the workspace and the
 * runs' keys), then per run its graph part and the rest (each JSON, or gzipped when big), each read
 * only when a screen asks for it. Nothing is fetched.
 */
export function readEmbedded(doc: Document): ReportSource {
  const index = JSON.parse(doc.getElementById("causeway-data")?.textContent ?? "") as { generated: string; workspace: Workspace; runs: string[] };
  const runs = new Map<string, ReportRun>();
  index.runs.forEach((key, i) => {
    const el = (part: string) => {
      const e = doc.getElementById(`causeway-${part}-${i}`);
      if (!e) throw new Error(`the report has no ${part} data for run ${key}`);
      return e;
    };
    let graph: Promise<RunGraph> | undefined;
    let inv: Promise<Investigation> | undefined;
    const readGraph = () => (graph ??= readElement(el("graph")) as Promise<RunGraph>);
    runs.set(key, {
      graph: readGraph,
      investigation: () =>
        (inv ??= (async () => {
          const { graph: drawn } = await readGraph();
          // the rest follows the script in the page: wait until the browser has parsed it
          if (doc.readyState === "loading") await new Promise((resolve) => doc.addEventListener("DOMContentLoaded", resolve, { once: true }));
          const rest = (await readElement(el("run"))) as Omit<Investigation, "graph">;
          // the same graph object as the graph part's: a drawn graph stays as it is
          return { ...rest, graph: drawn };
        })()),
    });
  });
  return { generated: index.generated, workspace: index.workspace, runs };
}

/** A data element's JSON: text, or gzipped JSON in base64 inflated with DecompressionStream. */
async function readElement(el: HTMLElement): Promise<unknown> {
  const text = el.textContent ?? "";
  if (el.dataset.encoding !== "gzip+base64") return JSON.parse(text);
  const stream = new Blob([fromBase64(text.trim())]).stream().pipeThrough(new DecompressionStream("gzip"));
  return JSON.parse(await new Response(stream).text());
}

/** Base64 to bytes: natively where the browser has Uint8Array.fromBase64, else through atob. */
function fromBase64(text: string): Uint8Array<ArrayBuffer> {
  const native = (Uint8Array as { fromBase64?: (s: string) => Uint8Array<ArrayBuffer> }).fromBase64;
  if (native) return native.call(Uint8Array, text);
  const raw = atob(text);
  const bytes = new Uint8Array(raw.length);
  for (let i = 0; i < raw.length; i++) bytes[i] = raw.charCodeAt(i);
  return bytes;
}

async function boot(): Promise<void> {
  const root = document.getElementById("root");
  if (!root) return;
  const embedded = document.getElementById("causeway-data");
  let host: Host;
  if (embedded) {
    let data: ReportSource;
    try {
      performance.mark("causeway:boot");
      data = readEmbedded(document);
      performance.mark("causeway:parsed");
    } catch (err) {
      root.textContent = `This report's data could not be read: ${err instanceof Error ? err.message : String(err)}`;
      return;
    }
    host = new ReportHost(data);
    // A report opened on a run's Graph screen: its graph part is read (inflated) before the first
    // render, so the page draws the graph at once rather than "Reading the run…" first.
    const ui = host.loadState();
    await (ui?.screen === "graph" && ui.run
      ? data.runs
          .get(ui.run)
          ?.graph()
          .catch(() => undefined)
      : undefined);
  } else {
    host = new VscodeHost();
  }
  const ctl = new Controller(host);
  render(<App ctl={ctl} />, root);
  ctl.start();
}

void boot();
