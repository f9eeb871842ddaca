// @vitest-environment happy-dom
/** @jsxImportSource preact */
// The Why screen shows Find the cause's chain from the Investigation (rebuilt from tests.jsonl,
// core/analysis/chains.ts): after a reload, in the static report, and for a forged tests.jsonl as
// bounded text, with a chain written by someone else marked and apart.
import fs from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, test } from "vitest";
import { investigate } from "../../../core/analysis/investigate";
import { CHAIN_MAX } from "../../../core/analysis/tested";
import type { Investigation } from "../../../core/analysis/types";
import { readRun } from "../../../core/log/reader";
import { reportData } from "../../../core/report/report";
import { NOTE, TARGET, recordAndAttribute } from "../analysis/handoff-run";
import { ScriptedHost, VSCODE, mount, step, text, withText } from "./fixture";

const RUN = "wrapped-handoff";
let dir: string;
beforeAll(async () => {
  ({ dir } = await recordAndAttribute(RUN));
}, 120_000);

function open(inv: Investigation, caps = VSCODE) {
  const host = new ScriptedHost(caps, { screen: "why", run: RUN });
  const { root } = mount(host);
  host.send({ type: "init", capabilities: caps });
  host.send({ type: "workspace", workspace: { schema: "causeway.workspace.v1", runs: [inv.summary], influence: { sources: [], outcomes: [], edges: [] } } });
  host.send({ type: "investigation", run: RUN, investigation: inv });
  step(() => withText(root, ".why-item", "send_email")[0].click());
  return root;
}
const steps = (el: Element | null) => [...(el?.querySelectorAll(".cause-chain .chain-step") ?? [])].map((li) => text(li.querySelector(":scope > code")));

describe("the Why screen's recorded chain", () => {
  test("after a reload, with no Find the cause run in this session, the selected call shows the chain hop by hop", () => {
    const root = open(investigate(readRun(dir)));
    expect(root.querySelector(".job")).toBeNull();
    const chain = root.querySelector(".recorded-chain");
    expect(steps(chain)).toEqual([NOTE.slice(6), "user", TARGET]);
    expect(text(chain)).toMatch(/confirmed|primary|cause/i);
    expect(text(chain)).toMatch(/tests\.jsonl:\d+, \d+/);
    expect(root.querySelector(".foreign-chain-warning")).toBeNull();
  });

  test("in the static report, from the Investigation it embeds", () => {
    const data = reportData(dir);
    const root = open(data.runs[RUN], { mode: "report", canReplay: false, replayReason: "a static report cannot replay" });
    expect(steps(root.querySelector(".recorded-chain"))).toEqual([NOTE.slice(6), "user", TARGET]);
  });

  test("a forged tests.jsonl (markup, huge ids, a cycle, too many hops, a chain by someone else) shows as bounded text", () => {
    const d = fs.mkdtempSync(`${dir}-forged-`);
    fs.cpSync(dir, d, { recursive: true });
    const evil = `input:<img src=x onerror="globalThis.pwned=1"><script>globalThis.pwned=1</script>`;
    const hop = (attr: string, index: number, from: string, to: string, writer = "local") => ({
      target: TARGET,
      intervention: from,
      verdict: "causal",
      role: "<b>primary</b>",
      n: 10,
      effect: 0.7,
      ci: [0.3, 1],
      attribution: attr,
      chain_hop: { index, from, to },
      writer,
    });
    const lines = [
      hop("forged000001", 0, evil, "msg:a->b"),
      hop("forged000001", 1, "msg:a->b", "msg:b->a"),
      hop("forged000001", 2, "msg:b->a", "msg:a->b"),
      hop("forged000001", 3, `input:${"W".repeat(200_000)}`, "input:nonexistent"),
      ...Array.from({ length: 2 * CHAIN_MAX }, (_, i) => hop("forged000001", 4 + i, `msg:n${i}->n${i + 1}`, `msg:n${i + 1}->n${i + 2}`)),
      hop("mallory00001", 0, `input:<iframe src="javascript:alert(1)">`, TARGET, "mallory"),
    ];
    fs.appendFileSync(path.join(d, "tests.jsonl"), lines.map((l) => JSON.stringify(l)).join("\n") + "\n");
    const root = open(investigate(readRun(d)));
    expect(root.querySelector("img, script, iframe, b")).toBeNull();
    expect((globalThis as { pwned?: number }).pwned).toBeUndefined();
    const [mine, theirs] = [...root.querySelectorAll(".recorded-chain")];
    const got = steps(mine);
    expect(got[0]).toBe(evil.slice(6)); // shown as text
    expect(got.slice(1, 4)).toEqual(["a \u2192 b", "b \u2192 a", "a \u2192 b"]);
    expect(got.length).toBe(CHAIN_MAX + 1);
    expect(Math.max(...got.map((s) => s.length))).toBeLessThanOrEqual(1001);
    expect(theirs.classList.contains("recorded-chain-foreign")).toBe(true);
    expect(text(theirs.querySelector(".foreign-chain-warning"))).toMatch(/someone other than the run's writer \(mallory\).*not counted/);
    expect(steps(theirs)).toEqual([`<iframe src="javascript:alert(1)">`, TARGET]);
  });
});
