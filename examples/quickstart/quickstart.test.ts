/** The quickstart's own test: record runs, find one that over-ordered, and prove why. */
import { describe, it, expect } from "vitest";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { readRun } from "../../core/log/reader";
import { ReplayContext } from "../../core/replay/context";
import { runTest } from "../../core/replay/run-test";
import { attribute } from "../../core/replay/attribute";
import { alertsFor } from "../../core/analysis/investigate";
import { SYSTEM } from "./quickstart";

describe("quickstart", () => {
  it("the injected page, not the policy, caused the 500-unit order", async () => {
    const out = fs.mkdtempSync(path.join(os.tmpdir(), "quickstart-"));
    let bad: string | undefined;
    for (let seed = 0; seed < 10 && !bad; seed++) {
      const r = await SYSTEM.run({ seed, outDir: out });
      if (r.actions.some((a) => a.tool === "place_order" && a.args.includes('"quantity":500'))) bad = r.dir;
    }
    expect(bad).toBeDefined();
    const run = readRun(bad!);
    // tracing alone can only say the page reached the order
    expect(alertsFor(run).map((a) => [a.severity, a.rule])).toContainEqual(["review", "untrusted-reach"]);
    const ctx = new ReplayContext(run, SYSTEM);
    const page = await runTest(ctx, { intervention: "input:web:acme/usb-c-hub", target: "tool=place_order,arg~500", n: 30 });
    expect(page.verdict).toBe("causal");
    const policy = await runTest(ctx, { intervention: "input:kb:purchasing-policy", target: "tool=place_order,arg~500", n: 30 });
    expect(policy.verdict).not.toBe("causal");
    const found = await attribute(new ReplayContext(readRun(bad!), SYSTEM), { target: "tool=place_order,arg~500" });
    expect(found.causes.map((c) => c.spec)).toEqual(["input:web:acme/usb-c-hub"]);
  });
});
