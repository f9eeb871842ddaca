// LlamaIndex.TS tools (tool() from llamaindex, a FunctionTool), declared to `causeway record` with
// --tool llamaindex-tools.mjs:fetchDoc,sendEmail.
import { tool } from "llamaindex";
import { z } from "zod";
import * as docs from "./docs.mjs";

export const fetchDoc = tool({
  name: "fetch_doc",
  description: "Fetch a document by name",
  parameters: z.object({ name: z.string() }),
  execute: docs.fetchDoc,
});

export const sendEmail = tool({
  name: "send_email",
  description: "Send an e-mail",
  parameters: z.object({ to: z.string(), subject: z.string(), body: z.string() }),
  execute: docs.sendEmail,
});
