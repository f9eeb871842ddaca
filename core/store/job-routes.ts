/**
 * The contract between the collector's HTTP server (core/capture/server.ts) and the job routes
 * a PostgreSQL store adds (core/jobs/api.ts). It lives here, below both, so the server needs no
 * import of the job engine: the CLI plugs the routes in when `serve --store` names PostgreSQL.
 */
import type http from "node:http";
import type { JsonBudget } from "./http";
import type { CollectorStore } from "./types";

/** What a route needs of the server: who is asking, the store, and the body limits. */
export interface JobsContext {
  principalOf(req: http.IncomingMessage): { principal: string; scopes: Set<string> } | undefined;
  store: CollectorStore;
  maxBody: number;
  budget: JsonBudget;
}

/** The job routes (/v1/jobs…): `handle` answers a request it owns and says whether it did. */
export interface CollectorJobs {
  handle(ctx: JobsContext, req: http.IncomingMessage, res: http.ServerResponse): Promise<boolean>;
  close(): Promise<void>;
}
