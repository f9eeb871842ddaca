// @vitest-environment happy-dom
/** @jsxImportSource preact */
// The investigator shows bidi controls, never applies them: a run whose agent, tool and source
// names and values carry U+202E, U+2066/2069 and U+200F (test/unit/security/hostile-text.cjs) is
// drawn on every screen with each as ⟨U+202E⟩, in text and in every attribute a person sees (the
// guard App.tsx installs wherever the investigator mounts: webview/bidi.ts).
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { System } from "../../../core/sdk/system";
import { reportData } from "../../../core/report/report";
import type { Screen } from "../../../core/protocol/messages";
import type { ReportData } from "../../../webview/host";
import { ScriptedHost, VSCODE, mount, step } from "./fixture";
import { RAW_BIDI, recordHostileText } from "../security/hostile-text";

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "cw-bidi-wv-"));
let data: ReportData;
beforeAll(async () => {
  await recordHostileText(System, path.join(tmp, "runs"));
  data = reportData(path.join(tmp, "runs"));
}, 60_000);
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

const rawBidi = (s: string) => RAW_BIDI.filter((c: string) => s.includes(c)).map((c: string) => `U+${c.charCodeAt(0).toString(16)}`);

describe("the investigator", () => {
  const SCREENS: Screen[] = ["runs", "overview", "why", "timeline", "graph", "agents", "influence"];
  it("shows every bidi control as ⟨U+…⟩ on every screen, in text and titles", () => {
    const run = Object.keys(data.runs).find((k) => data.runs[k].summary)!;
    const inv = data.runs[run];
    const host = new ScriptedHost(VSCODE, { run });
    const { root: el, ctl } = mount(host);
    host.send({ type: "init", capabilities: VSCODE });
    host.send({ type: "workspace", workspace: data.workspace });
    host.send({ type: "investigation", run, investigation: inv });
    let shownOnce = false;
    for (const screen of SCREENS) {
      step(() => ctl.go(screen));
      if (screen === "graph") step(() => ctl.setGraph({ node: inv.graph.nodes.find((n) => n.type === "action")!.id }));
      const text = el.textContent ?? "";
      expect(rawBidi(text), screen).toEqual([]);
      // every attribute a person sees (a form control's value is data sent back, never drawn: an <option>'s text is)
      for (const e of el.querySelectorAll("*"))
        for (const a of e.attributes) if (a.name !== "value") expect(rawBidi(a.value), `${screen} ${e.tagName}[${a.name}]`).toEqual([]);
      if (text.includes("⟨U+202E⟩")) shownOnce = true;
    }
    expect(shownOnce).toBe(true);
  });
});
