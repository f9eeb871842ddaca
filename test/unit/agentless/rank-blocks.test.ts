/**
 * `causeway attribute --rank-blocks K`: before testing five documents one of which plants an
 * instruction, K replays with random halves removed and a sparse fit predict which to test first;
 * the output says the order is predicted, and the paired tests decide. Through the CLI, on a
 * gateway recording replayed without its program (rung 2) against the fake model server.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeLlm, type FakeLlm } from "../../fake-llm/server";
import { cli, recordMailer } from "./desk";

const KEY = "sk-user-rank-6a07";
const DOCS = ["ticket-881", "refund-policy", "vendor-note", "shipping-faq", "holiday-hours"];
const doc = (d: string) => `input:tool:fetch_doc {"name":"${d}"}`;
const HARM = "tool=send_email,arg~vendor-compliance";

let recorded: FakeLlm;
let replay: FakeLlm;
let tmp: string;
let dir: string;

beforeAll(async () => {
  recorded = await startFakeLlm({ followRate: 1 });
  replay = await startFakeLlm({ followRate: 0.7 });
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "cw-rank-"));
  dir = await recordMailer(recorded.url, path.join(tmp, "runs"), path.join(tmp, "m"), "five", { docs: DOCS });
});
afterAll(async () => {
  await recorded?.close();
  await replay?.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

// five suspects named (no lead from the recording), so the phase is ranked first
const args = (k: string) => [
  "attribute",
  dir,
  "--target",
  HARM,
  ...DOCS.flatMap((d) => ["--suspect", doc(d)]),
  "--rank-blocks",
  k,
  "--n",
  "10",
  "--n-max",
  "30",
  "--workers",
  "4",
];
const env = () => ({ OPENAI_BASE_URL: replay.openaiBaseURL, OPENAI_API_KEY: KEY });

describe("attribute --rank-blocks", () => {
  it("predicts the planted document, tests it first, and the tests blame it alone; the output says the order is predicted", async () => {
    const j = await cli([...args("16"), "--json"], env());
    expect(j.code, j.err).toBe(0);
    const a = JSON.parse(j.out);
    const ph = a.phases[0];
    expect(ph.predicted.k).toBe(16);
    expect(ph.predicted.order[0].spec).toBe(doc("vendor-note"));
    expect(ph.lead).toBe(doc("vendor-note"));
    expect(a.tests[0].intervention).toBe(doc("vendor-note"));
    expect(a.causes.map((c: { spec: string }) => c.spec)).toEqual([doc("vendor-note")]);

    const t = await cli(args("16"), env());
    expect(t.code, t.err).toBe(0);
    expect(t.out).toMatch(
      /predicted order of the given suspects \(a surrogate fit on 16 replays with random halves removed, \d+ with the action; predicted, not tested\): input:tool:fetch_doc \{"name":"vendor-note"\} \+/,
    );
  });

  it("is refused with --collector (the team's workers don't take it) rather than ignored", async () => {
    const r = await cli(
      ["attribute", "some-run", "--target", HARM, "--rank-blocks", "16", "--collector", "http://127.0.0.1:9", "--token-env", "NO_SUCH_TOKEN_VAR", "--json"],
      { NO_SUCH_TOKEN_VAR: "t" },
    );
    expect(r.code).toBe(2);
    expect(JSON.parse(r.out).error).toContain("--rank-blocks is not taken by the team's workers");
  });

  it("refuses a K below 2 before anything is sent", async () => {
    const before = replay.requests.length;
    const r = await cli([...args("1"), "--json"], env());
    expect(r.code).toBe(2);
    expect(JSON.parse(r.out).error).toContain("--rank-blocks must be an integer ≥ 2");
    expect(replay.requests.length).toBe(before);
  });
});
