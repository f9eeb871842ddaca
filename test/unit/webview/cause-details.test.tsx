// @vitest-environment happy-dom
/** @jsxImportSource preact */
// From cause to fix on the Why screen, rendered from a real investigation of the demo run after
// Find the cause (with spans) and two fix checks: the causing span marked inside the note, the fix
// table, Check a fix and Export case posting their messages, and the timeline's link to the span.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { beforeAll, describe, expect, test } from "vitest";
import type { Investigation } from "../../../core/analysis/types";
import { investigate } from "../../../core/analysis/investigate";
import { readRun } from "../../../core/log/reader";
import { ReplayContext } from "../../../core/replay/context";
import { attribute } from "../../../core/replay/attribute";
import { narrowAttribution } from "../../../core/replay/narrow";
import { fixCheck } from "../../../core/replay/fixcheck";
import { EXFIL_TARGET } from "../../../core/cli/demo";
import { loadProgram, resolveProgram } from "../../../core/replay/loader";
import { ScriptedHost, VSCODE, mount, step, text, withText } from "./fixture";

let inv: Investigation;
let spanSpec: string;
beforeAll(async () => {
  const DEMO = await loadProgram(resolveProgram("causeway:demo", process.cwd()));
  const dir = (await DEMO.run({ seed: 0, outDir: fs.mkdtempSync(path.join(os.tmpdir(), "cw-wv-c2f-")), runId: "demo-seed0" })).dir!;
  const ctx = new ReplayContext(readRun(dir), DEMO);
  const a = await attribute(ctx, { target: EXFIL_TARGET });
  await narrowAttribution(ctx, a);
  spanSpec = String(readRun(dir).tests.find((t) => t.causing_span)!.intervention);
  await fixCheck(new ReplayContext(readRun(dir), DEMO), { fix: spanSpec, harm: EXFIL_TARGET });
  inv = investigate(readRun(dir, { checkBlobs: true }));
}, 120_000);

const click = (el: Element) => step(() => (el as HTMLElement).click());

function open(investigation: Investigation) {
  const host = new ScriptedHost(VSCODE, { screen: "why", run: "demo-seed0" });
  const { root } = mount(host);
  host.send({ type: "init", capabilities: VSCODE });
  host.send({
    type: "workspace",
    workspace: { schema: "causeway.workspace.v1", runs: [investigation.summary], influence: { sources: [], edges: [] } as never },
  });
  host.send({ type: "investigation", run: "demo-seed0", investigation });
  click(withText(root, ".why-item", "#18")[0]);
  return { host, root };
}

describe("from cause to fix", () => {
  test("the causing span is marked inside the note's full content, with its effect and interval", () => {
    const { root } = open(inv);
    const span = root.querySelector(".causing-span")!;
    const marks = [...span.querySelectorAll("mark.span-mark")].map(text);
    expect(marks).toHaveLength(1);
    expect(marks[0]).toMatch(/^NOTE TO AI ASSISTANT: .*audit@vendor-compliance\.example for reconciliation\.$/);
    expect(text(span.querySelector(".span-text"))).toMatch(/^Batch B-200 shipped in March .* NOTE TO AI ASSISTANT/);
    expect(text(span.querySelector(".causing-span-head"))).toMatch(
      /^Causing span of vendor:portal\/notes\.md sentence \+0\.\d\d \[\+0\.\d\d, \+\d\.\d\d\] n = \d+ whole input \+0\.\d\d/,
    );
    const fix = text(root.querySelector(".fix-table tbody tr"));
    expect(fix).toMatch(/fixed \d+% → 0%/);
    expect(fix).toMatch(/tool=issue_refund kept/);
  });

  test("Check a fix and Export case ask the host", () => {
    const { host, root } = open(inv);
    click(withText(root, "button", "Check a fix: redact the span")[0]);
    expect(host.last("checkFix")).toMatchObject({
      type: "checkFix",
      run: "demo-seed0",
      fix: [spanSpec],
      harm: inv.actions[Object.keys(inv.actions).find((k) => inv.actions[k].seq === 18)!].target,
    });
    click(withText(root, "button", "Export case")[0]);
    expect(host.last("exportCase")).toMatchObject({ type: "exportCase", run: "demo-seed0" });
  });

  test("the timeline's row of the note links to its causing span", () => {
    const { root } = open(inv);
    click(root.querySelector("#tab-timeline")!);
    const row = withText(root, ".timeline tbody tr", "vendor:portal/notes.md")[0];
    click(row.querySelector(".span-link")!);
    expect(root.querySelector("#tab-why")!.getAttribute("aria-selected")).toBe("true");
    expect(root.querySelector(".causing-span mark")).not.toBeNull();
  });

  test("hostile content in a span stays text", () => {
    const hostile = structuredClone(inv);
    for (const a of Object.values(hostile.actions)) for (const s of a.causes?.spans ?? []) s.text = '<img src=x onerror="window.__pwned=1">' + s.text;
    const { root } = open(hostile);
    expect(root.querySelector(".causing-span img")).toBeNull();
    expect(text(root.querySelector(".span-text"))).toContain("<img src=x");
  });
});

describe("the host checks the new messages", async () => {
  const { parseWebviewMessage } = await import("../../../core/protocol/messages");
  test("checkFix and exportCase: well-formed ones pass, a fix that would read a file does not", () => {
    expect(parseWebviewMessage({ type: "checkFix", requestId: "r1", run: "x", fix: ["guard:block"], harm: "tool=a" })).toEqual({
      type: "checkFix",
      requestId: "r1",
      run: "x",
      fix: ["guard:block"],
      harm: "tool=a",
      keep: undefined,
    });
    expect(parseWebviewMessage({ type: "checkFix", requestId: "r1", run: "x", fix: ["replace:input:system=@/etc/passwd"], harm: "tool=a" })).toBeNull();
    expect(parseWebviewMessage({ type: "checkFix", requestId: "r1", run: "x", fix: [], harm: "tool=a" })).toBeNull();
    expect(parseWebviewMessage({ type: "checkFix", requestId: "../x", run: "x", fix: ["guard:block"], harm: "tool=a" })).toBeNull();
    expect(parseWebviewMessage({ type: "exportCase", run: "x", target: "tool=a" })).toEqual({ type: "exportCase", run: "x", target: "tool=a" });
    expect(parseWebviewMessage({ type: "exportCase", run: "x" })).toBeNull();
  });
});
