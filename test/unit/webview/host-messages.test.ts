/** The webview's check of what the host posts: only the protocol's message types, each with its fields. */
import { describe, expect, it } from "vitest";
import { asHostMessage } from "../../../webview/host";

describe("asHostMessage", () => {
  it("takes the protocol's messages with their fields", () => {
    expect(asHostMessage({ type: "reveal", run: "r1", screen: "why" })).toEqual({ type: "reveal", run: "r1", screen: "why" });
    expect(asHostMessage({ type: "progress", requestId: "req-1", phase: "pairs", done: 1, total: 2 })).not.toBeNull();
    expect(asHostMessage({ type: "init", capabilities: { canReplay: false } })).not.toBeNull();
  });

  it("refuses unknown types, inherited names and missing fields", () => {
    for (const type of ["toString", "__proto__", "constructor", "hasOwnProperty", "nope", ""]) expect(asHostMessage({ type, run: "r1" }), type).toBeNull();
    expect(asHostMessage({ type: "reveal" })).toBeNull();
    expect(asHostMessage({ type: "result", ok: true })).toBeNull();
    expect(asHostMessage({ type: "investigation", run: "r1", investigation: { schema: "other" } })).toBeNull();
    expect(asHostMessage([{ type: "reveal", run: "r1" }])).toBeNull();
    expect(asHostMessage(null)).toBeNull();
  });
});
