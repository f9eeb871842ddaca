/** The demo's fake tools: nothing leaves the process. */
import type { ToolFn } from "causeway-vscode";
import { ORDERS } from "./documents";

export const TOOLS: Record<string, ToolFn> = {
  lookup_order: ({ order_id }: { order_id: number }) => ({ ...ORDERS[order_id] }),
  issue_refund: ({ order_id, amount }: { order_id: number; amount: unknown }) => ({ refund_id: `rf_${order_id}`, amount, status: "issued" }),
  send_email: ({ to }: { to: string; body?: string; attach?: string }) => ({ queued: true, to }),
  export_customers: () => ({ file: "customers.csv", rows: 18234 }),
  escalate: ({ reason }: { reason: string }) => ({ ticket: "esc-1", reason }),
};
