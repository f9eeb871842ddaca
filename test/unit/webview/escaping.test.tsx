// @vitest-environment happy-dom
/** @jsxImportSource preact */
// A run whose every name and value is markup or script: on every screen and in every record the
// strings appear as text, and no element or attribute comes from them.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { beforeAll, expect, test } from "vitest";
import * as sdk from "../../../core/index";
import { reportData } from "../../../core/report/report";
import type { Screen } from "../../../core/protocol/messages";
import type { ReportData } from "../../../webview/host";
import { HOSTILE, XSS, recordHostile } from "../../browser/hostile.mjs";
import { ScriptedHost, VSCODE, mount, step } from "./fixture";

let data: ReportData;
beforeAll(async () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "causeway-hostile-"));
  await recordHostile(sdk, root);
  data = reportData(root);
}, 60_000);

/** Elements and attributes a hostile string could have created. */
function injected(root: Element): string[] {
  const bad: string[] = [];
  for (const el of root.querySelectorAll("*")) {
    const tag = el.tagName.toLowerCase();
    if (["img", "script", "iframe", "object", "embed", "a", "form", "link", "style", "meta", "foreignobject"].includes(tag)) bad.push(`<${tag}>`);
    if (tag === "svg" && !el.classList.contains("influence-diagram") && !el.classList.contains("graph-svg")) bad.push("<svg>");
    for (const a of el.attributes) {
      if (/^on/i.test(a.name)) bad.push(`${tag}[${a.name}]`);
      if (/^\s*javascript:/i.test(a.value) && !["title", "aria-label", "value"].includes(a.name)) bad.push(`${tag}[${a.name}=${a.value}]`);
    }
  }
  return bad;
}

const SCREENS: Screen[] = ["runs", "overview", "why", "timeline", "graph", "agents", "influence"];

test("every screen shows hostile strings as text and creates nothing from them", () => {
  const run = Object.keys(data.runs)[0];
  const inv = data.runs[run];
  expect(inv.alerts[0]).toMatchObject({ severity: "high", value: XSS.js });
  const host = new ScriptedHost(VSCODE, { run });
  const { root, ctl } = mount(host);
  host.send({ type: "init", capabilities: VSCODE });
  host.send({ type: "workspace", workspace: data.workspace });
  host.send({ type: "investigation", run, investigation: inv });
  const seen = new Set<string>();
  for (const screen of SCREENS) {
    step(() => ctl.go(screen));
    if (screen === "graph") step(() => ctl.setGraph({ node: inv.graph.nodes.find((n) => n.type === "action")!.id }));
    expect(injected(root), screen).toEqual([]);
    const shown = root.textContent ?? "";
    for (const s of HOSTILE) if (shown.includes(s)) seen.add(s);
  }
  // The literal strings are on screen: escaped, not dropped.
  expect([...seen].sort()).toEqual([...HOSTILE].sort());
  // Every event's full record.
  for (const e of inv.events) {
    step(() => ctl.openRecord(e.seq));
    for (const d of root.querySelectorAll("details")) step(() => d.setAttribute("open", ""));
    expect(injected(root), `record #${e.seq}`).toEqual([]);
  }
  expect((window as unknown as { __pwned?: number }).__pwned).toBeUndefined();
});

test("hostile strings in filters and hashes stay inert", () => {
  const run = Object.keys(data.runs)[0];
  const host = new ScriptedHost(VSCODE, { run, screen: "timeline", filters: { agent: XSS.img, type: "", text: XSS.script, flagged: false } });
  const { root } = mount(host);
  host.send({ type: "init", capabilities: VSCODE });
  host.send({ type: "workspace", workspace: data.workspace });
  host.send({ type: "investigation", run, investigation: data.runs[run] });
  expect(injected(root)).toEqual([]);
  expect(root.querySelector<HTMLInputElement>(".filters input[type=search]")!.value).toBe(XSS.script);
});
