/**
 * Boots the investigator. In the static report the data is embedded in the page
 * (<script type="application/json" id="causeway-data">) and a ReportHost answers from it; inside
 * VS Code a VscodeHost talks to the extension. Either way the same app mounts into #root.
 */
import { render } from "preact";
import "./styles.css";
import { App } from "./components/App";
import { ReportHost, VscodeHost, type Host, type ReportData } from "./host";
import { Controller } from "./store";

/**
 * The report's embedded data: JSON text, or (for big reports) gzipped JSON in base64, inflated with
 * the browser's DecompressionStream. Nothing is fetched.
 */
export async function readEmbedded(el: HTMLElement): Promise<ReportData> {
  const text = el.textContent ?? "";
  if (el.dataset.encoding !== "gzip+base64") return JSON.parse(text) as ReportData;
  const raw = atob(text.trim());
  const bytes = new Uint8Array(raw.length);
  for (let i = 0; i < raw.length; i++) bytes[i] = raw.charCodeAt(i);
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  return JSON.parse(await new Response(stream).text()) as ReportData;
}

async function boot(): Promise<void> {
  const root = document.getElementById("root");
  if (!root) return;
  const embedded = document.getElementById("causeway-data");
  let host: Host;
  if (embedded) {
    let data: ReportData;
    try {
      performance.mark("causeway:boot");
      data = await readEmbedded(embedded);
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

void boot();
