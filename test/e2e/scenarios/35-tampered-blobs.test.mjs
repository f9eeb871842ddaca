// Tampered runs in a real VS Code, without anyone running Verify: a workspace with an intact run,
// a run whose blob was forged (its content edited, its name kept) and a run whose blob was
// deleted. The background analysis checks blobs, so the runs tree shows both tampered runs as
// "failed verify" (never intact), the Problems panel has a "Verify failed" error on the line of
// events.jsonl that names the blob, and the status bar counts their integrity alerts.
import { before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { launchBrowser, makeWorkspace, openViewContainer, openWorkbench, problems, scenario, screenshot, treeRows, waitUntil, T } from "../lib.mjs";
import { REFERENCE_RUNS, cliAlertCounts } from "../causeway.mjs";

const VIEW = "Runs";
let ws;
let b;
let page;
const lines = {};

/** The first action's args blob of a run, and the 1-based line of events.jsonl naming it. */
function argsBlob(dir) {
  const ls = fs.readFileSync(path.join(dir, "events.jsonl"), "utf8").split("\n").filter(Boolean);
  const i = ls.findIndex((l) => JSON.parse(l).type === "action");
  const ref = JSON.parse(ls[i]).args_ref;
  return { file: path.join(dir, "blobs", ref.slice(7) + ".json"), line: i + 1 };
}

before(async () => {
  ws = makeWorkspace("causeway-tampered");
  for (const name of ["intact", "forged", "missing"]) {
    fs.cpSync(path.join(REFERENCE_RUNS, "demo-seed0"), path.join(ws, "runs", name), { recursive: true });
  }
  const forged = argsBlob(path.join(ws, "runs/forged"));
  fs.writeFileSync(forged.file, fs.readFileSync(forged.file, "utf8").replace(/"v": \{/, '"v": {"bcc": "x@evil.example", '));
  lines.forged = forged.line;
  const missing = argsBlob(path.join(ws, "runs/missing"));
  fs.rmSync(missing.file);
  lines.missing = missing.line;
  b = await launchBrowser();
  page = b.page;
  await openWorkbench(page, { folder: ws });
});

after(async () => {
  await b?.close();
});

scenario("the runs tree shows the forged-blob and missing-blob runs as failed verify, without Verify", async () => {
  await openViewContainer(page, "Causeway");
  await treeRows(page, VIEW, { minRows: 3, timeout: T(60_000) });
  const rows = await waitUntil(
    page,
    async () => {
      // until every run is analysed ("reading…" goes away)
      const all = await treeRows(page, VIEW);
      const runs = all.filter((r) => ["intact", "forged", "missing"].includes(r.label));
      return runs.length === 3 && runs.every((r) => !r.description.startsWith("reading")) ? all : undefined;
    },
    { timeout: T(60_000), what: "the three runs analysed" },
  );
  const desc = (label) => rows.find((r) => r.label === label)?.description ?? "";
  assert.match(desc("intact"), /^intact · /);
  assert.match(desc("forged"), /^failed verify · /);
  assert.match(desc("missing"), /^failed verify · /);
  // the alert counts are those of `causeway alerts`, which carries the integrity alert
  for (const name of ["intact", "forged", "missing"]) {
    assert.ok(desc(name).includes(cliAlertCounts(path.join(ws, "runs", name))), `${name}: ${desc(name)}`);
  }
  await screenshot(page, "35-tampered-tree");
});

scenario("Problems shows Verify failed on the line that names each tampered blob", async () => {
  const list = await problems(page, { minCount: 2, timeout: T(30_000) });
  for (const [name, re] of [
    ["forged", /does not hash to its name/],
    ["missing", /is missing/],
  ]) {
    const errs = list.filter((p) => p.file === `runs/${name}/events.jsonl` && p.severity === "error" && /^Verify failed/.test(p.message));
    assert.equal(errs.length, 1, `${name}: ${JSON.stringify(list.map((p) => [p.file, p.line, p.message]))}`);
    assert.equal(errs[0].line, lines[name]);
    assert.match(errs[0].message, re);
  }
  assert.ok(!list.some((p) => p.file === "runs/intact/events.jsonl" && /^Verify failed/.test(p.message)), "the intact run has no integrity error");
  await screenshot(page, "35-tampered-problems");
});

scenario("the status bar counts the integrity alerts of the tampered runs", async () => {
  const high = ["intact", "forged", "missing"].reduce((n, name) => n + Number(/(\d+) high/.exec(cliAlertCounts(path.join(ws, "runs", name)))?.[1] ?? 0), 0);
  const item = page.locator(".part.statusbar .statusbar-item", { hasText: / high$/ }).first();
  await item.waitFor({ timeout: T(30_000) });
  let last = "";
  const text = await waitUntil(page, async () => ((last = (await item.innerText()).trim()).endsWith(`${high} high`) ? last : undefined), {
    timeout: T(30_000),
    what: `the status bar at ${high} high`,
  }).catch((e) => assert.fail(`${e.message}; it shows "${last}"`));
  assert.match(text, new RegExp(`\\b${high} high$`));
});
