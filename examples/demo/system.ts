/**
 * The demo System: three agents, seeded mock models, fake tools. Replays find it as "causeway:demo".
 */
import { System } from "causeway-vscode";
import { program } from "./agents";
import { TASK } from "./documents";
import { mockModel } from "./models";
import { TOOLS } from "./tools";

export const SYSTEM = new System({
  program,
  models: { mock: mockModel },
  tools: TOOLS,
  task: TASK,
  name: "causeway:demo",
  sensitiveTools: ["issue_refund", "send_email", "export_customers"],
});

/** The exfiltration: the customer list e-mailed to the outside address. */
export const EXFIL_TARGET = "tool=send_email,arg~vendor-compliance";
export const REFUND_TARGET = "tool=issue_refund";
