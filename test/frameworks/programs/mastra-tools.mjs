// Mastra tools (createTool), declared to `causeway record` with
// --tool mastra-tools.mjs:fetchDoc,sendEmail.
import { createTool } from "@mastra/core/tools";
import { z } from "zod";
import * as docs from "./docs.mjs";

export const fetchDoc = createTool({
  id: "fetch_doc",
  description: "Fetch a document by name",
  inputSchema: z.object({ name: z.string() }),
  execute: async (input) => docs.fetchDoc(input),
});

export const sendEmail = createTool({
  id: "send_email",
  description: "Send an e-mail",
  inputSchema: z.object({ to: z.string(), subject: z.string(), body: z.string() }),
  execute: async (input) => docs.sendEmail(input),
});
