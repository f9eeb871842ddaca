/** @jsxImportSource preact */
// Shared by the webview tests: the demo's runs analysed by the real core (recorded and tested
// once per test file), a scripted host that records what the webview posts, and a mounted app.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { render } from "preact";
import { act } from "preact/test-utils";
import { runDemo } from "../../../core/cli/demo";
import { reportData } from "../../../core/report/report";
import type { RunSummary } from "../../../core/analysis/types";
import type { Capabilities, HostToWebview, WebviewToHost } from "../../../core/protocol/messages";
import { App } from "../../../webview/components/App";
import type { Host, ReportData, UiState } from "../../../webview/host";
import { Controller } from "../../../webview/state";

let cached: Promise<ReportData> | null = null;

/** The demo's 8 runs with its tests (n = 40, the reference's Newcombe figures), as the static report embeds them. */
export function demoData(): Promise<ReportData> {
  cached ??= (async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "causeway-webview-"));
    await runDemo({ out: dir, n: 40, quiet: true, method: "newcombe" });
    return reportData(dir);
  })();
  return cached;
}

/** A host the test drives: it records posts and state, and sends messages on request. */
export class ScriptedHost implements Host {
  readonly posted: WebviewToHost[] = [];
  saved: UiState | undefined;
  private listener: ((m: HostToWebview) => void) | null = null;

  constructor(
    public caps: Capabilities,
    private readonly initial?: Partial<UiState>,
  ) {}

  post(msg: WebviewToHost): void {
    this.posted.push(msg);
  }

  onMessage(fn: (m: HostToWebview) => void): () => void {
    this.listener = fn;
    return () => (this.listener = null);
  }

  loadState(): Partial<UiState> | undefined {
    return this.initial;
  }

  saveState(ui: UiState): void {
    this.saved = ui;
  }

  keyOf(s: RunSummary): string {
    return s.run_id;
  }

  /** Delivers a host message and lets the app re-render. */
  send(m: HostToWebview): void {
    void act(() => this.listener?.(m));
  }

  last<T extends WebviewToHost["type"]>(type: T): Extract<WebviewToHost, { type: T }> | undefined {
    return [...this.posted].reverse().find((m) => m.type === type) as Extract<WebviewToHost, { type: T }> | undefined;
  }
}

export const VSCODE: Capabilities = { mode: "vscode", canReplay: true };

/** Mounts the app on a fresh #root with the given host; returns the root and the controller. */
export function mount(host: ScriptedHost): { root: HTMLElement; ctl: Controller } {
  document.body.innerHTML = "";
  const root = document.createElement("div");
  root.id = "root";
  document.body.appendChild(root);
  const ctl = new Controller(host);
  void act(() => render(<App ctl={ctl} />, root));
  void act(() => ctl.start());
  return { root, ctl };
}

/** Sends init, the workspace and one run's investigation, as the extension does. */
export function connect(host: ScriptedHost, data: ReportData, run = "demo-seed0"): void {
  host.send({ type: "init", capabilities: host.caps });
  host.send({ type: "workspace", workspace: data.workspace });
  host.send({ type: "investigation", run, investigation: data.runs[run] });
}

/** Runs fn inside act() so state updates and effects settle. */
export function step(fn: () => void): void {
  void act(fn);
}

/** The text of an element as a reader sees it: separate elements' text joined by spaces. */
export function text(el: Element | null): string {
  if (!el) return "";
  const parts: string[] = [];
  const walk = (n: Node) => {
    if (n.nodeType === 3) parts.push(n.nodeValue ?? "");
    else n.childNodes.forEach(walk);
  };
  walk(el);
  return parts.join(" ").replace(/\s+/g, " ").trim();
}

/** Elements matching selector whose text includes needle. */
export function withText(root: ParentNode, selector: string, needle: string): HTMLElement[] {
  return [...root.querySelectorAll<HTMLElement>(selector)].filter((e) => (e.textContent ?? "").includes(needle));
}
