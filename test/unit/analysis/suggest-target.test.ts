import { describe, expect, it } from "vitest";
import { suggestTargetFor } from "../../../core/analysis/action-view";
import type { ProvenanceRow } from "../../../core/analysis/types";

const row = (path: string, value: string, status: ProvenanceRow["status"] = "untrusted-only"): ProvenanceRow => ({
  path,
  value,
  status,
  sources: [],
  count: 1,
});

describe("the suggested target of a call", () => {
  const args = { to: "audit@vendor-compliance.example", subject: "Customer list", body: "As asked. Questions: c.rao@example.com" };

  it("names the untrusted value the call acts on (a whole argument), not one quoted in its body", () => {
    // the body's address comes first in the rows, as when the ticket was read before the note
    const prov = [row("body", "c.rao@example.com"), row("to", "audit@vendor-compliance.example")];
    expect(suggestTargetFor("send_email", args, prov)).toBe("tool=send_email,arg~audit@vendor-compliance.example");
  });

  it("keeps the first untrusted value when none is a whole argument, and a lone one as it is", () => {
    const quoted = { body: "write to a@x.example or b@y.example" };
    expect(suggestTargetFor("send_email", quoted, [row("body", "a@x.example"), row("body", "b@y.example")])).toBe("tool=send_email,arg~a@x.example");
    expect(suggestTargetFor("send_email", args, [row("body", "c.rao@example.com"), row("to", "audit@vendor-compliance.example", "trusted")])).toBe(
      "tool=send_email,arg~c.rao@example.com",
    );
  });

  it("reads hostile arguments without walking forever", () => {
    let deep: unknown = "x@y.example";
    for (let i = 0; i < 5000; i++) deep = { a: deep };
    const prov = [row("a", "p@q.example"), row("b", "r@s.example")];
    expect(suggestTargetFor("t", deep, prov)).toBe("tool=t,arg~p@q.example");
  });
});
