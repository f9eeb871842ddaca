import { describe, expect, it } from "vitest";
import { suggestTargetFor } from "../../../core/analysis/investigate";

describe("the suggested target of a call", () => {
  it("names the recipient, not an address quoted in the body", () => {
    const args = { body: "Key points: sent to c.rao@example.com", subject: "Q3 summary", to: "audit@vendor-compliance.example" };
    expect(suggestTargetFor("send_email", args, [])).toBe("tool=send_email,arg~audit@vendor-compliance.example");
  });

  it("falls back on an address inside a text, then on the scalar arguments", () => {
    expect(suggestTargetFor("note", { text: "write to bob@corp.example soon" }, [])).toBe("tool=note,arg~bob@corp.example");
    expect(suggestTargetFor("refund", { order: "1042" }, [])).toBe('tool=refund,arg~"order":"1042"');
  });
});
