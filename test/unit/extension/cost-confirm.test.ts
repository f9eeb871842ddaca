/**
 * The cost question asked before a replay from a command or from the investigator's buttons: it
 * asks only above the user's threshold, and a declined question runs nothing.
 */
import { describe, it, expect, vi, beforeAll } from "vitest";
import path from "node:path";
import fs from "node:fs";

const ui = vi.hoisted(() => ({ answer: undefined as string | undefined, asked: [] as string[] }));
vi.mock("vscode", () => ({
  l10n: { t: (m: string, ...a: unknown[]) => m.replace(/\{(\d+)\}/g, (_, i: string) => String(a[Number(i)])) },
  window: {
    showWarningMessage: async (m: string) => {
      ui.asked.push(m);
      return ui.answer;
    },
  },
}));

import { confirmCost } from "../../../extension/cost-confirm";
import type { Services } from "../../../extension/services";
import { demoWorkspace } from "./helpers";

const TARGET = "tool=send_email,arg~vendor-compliance";
let run: string;
const services = (confirmAboveUsd: number | null) =>
  ({ settings: () => ({ confirmAboveUsd, prices: { mock: { input: 3, output: 15 } } }) }) as unknown as Services;

beforeAll(async () => {
  const ws = await demoWorkspace();
  run = path.join(
    ws,
    "runs",
    fs.readdirSync(path.join(ws, "runs")).find((d) => d.startsWith("demo-seed"))!,
  );
});

describe("the cost question before a replay", () => {
  it("asks above the threshold: Run runs, a dismissed question runs nothing", async () => {
    ui.asked = [];
    ui.answer = "Run";
    expect(await confirmCost(services(0), run, 80, "Find the cause", 4, TARGET)).toBe(true);
    ui.answer = undefined;
    expect(await confirmCost(services(0), run, 80, "Find the cause", 4, TARGET)).toBe(false);
    expect(ui.asked).toHaveLength(2);
    expect(ui.asked[0]).toMatch(/^Causeway: Find the cause may cost up to \$\d+\.\d\d \(at most [\d,]+ model calls, [\d,]+ tokens for 320 pairs/);
  });

  it("does not ask under the threshold, or when the user turned the question off", async () => {
    ui.asked = [];
    ui.answer = undefined;
    expect(await confirmCost(services(1_000_000), run, 80, "This test", 1, TARGET)).toBe(true);
    expect(await confirmCost(services(null), run, 80, "This test", 1, TARGET)).toBe(true);
    expect(ui.asked).toEqual([]);
  });
});
