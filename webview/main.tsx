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
import { Controller } from "./store";

/**
 * The report's embedded data (core/report/report.ts dataElements): an index (the workspace and the
 * runs' keys), then per run its graph part and the rest, each parsed only when a screen asks for it.
 * Nothing is fetched.
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
    let graph: RunGraph | undefined;
    let inv: Promise<Investigation> | undefined;
    const readGraph = () => (graph ??= JSON.parse(el("graph").textContent ?? "") as RunGraph);
    runs.set(key, {
      graph: readGraph,
      investigation: () =>
        (inv ??= (async () => {
          const { graph: drawn } = readGraph();
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
  const raw = atob(text.trim());
  const bytes = new Uint8Array(raw.length);
  for (let i = 0; i < raw.length; i++) bytes[i] = raw.charCodeAt(i);
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  return JSON.parse(await new Response(stream).text());
}

function boot(): void {
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
  } else {
    host = new VscodeHost();
  }
  const ctl = new Controller(host);
  render(<App ctl={ctl} />, root);
  ctl.start();
}

boot();
