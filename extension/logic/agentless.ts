/**
 * Replays without the program (rung 2) from the editor, apart from VS Code: which rung a replay
 * climbs, and where its model calls go.
 *
 *  - rung 3 (the program re-runs) when the program is a built-in or the user approved it
 *    (logic/approvals.ts), as before;
 *  - else, for a program the user could approve, the approval question, as before (a run
 *    recorded behind the gateway skips it: its program is never re-run);
 *  - else rung 2 when every model call's full request was recorded (the gateway, the preload, the
 *    SDK adapters): the worker re-sends them with tools from the tape; no program starts, so
 *    nothing is asked;
 *  - else rung 1 when rung 2 is refused (a tool the provider runs, provider-held state, a call not
 *    recorded in full) but some call that made an action can be re-sent alone: the worker re-sends
 *    the one call that made the target action, with and without each suspect, and refuses before
 *    sending anything when that call can't answer (worker-rung.ts);
 *  - else the approval question (or its refusal), as before.
 *
 * The endpoint and key are the user's: the base URL from the user's (never a workspace's)
 * `causeway.replay.baseUrl`, else the extension host's OPENAI_BASE_URL / ANTHROPIC_BASE_URL; the
 * key from VS Code's SecretStorage, else OPENAI_API_KEY / ANTHROPIC_API_KEY. A run's recorded
 * address is only ever shown.
 */
import { RunModel } from "../../core/graph/model";
import type { RunData } from "../../core/log/reader";
import { planAgentless } from "../../core/replay/agentless/plan";
import { rebuildRequest } from "../../core/replay/endpoint-replay";
import { decidingCall } from "../../core/replay/agentless/one-call";
import type { AgentlessEndpoint } from "../../core/replay/worker-protocol";
import type { Approval } from "../../core/replay/approval";
import { decidePermit, type PermitDecision, type StoredApproval } from "./approvals";
import { t } from "./l10n";

/** The replay's rung: the program (with its approval), without it, or the approval question / refusal. */
export type RungDecision =
  | { kind: "program"; approval?: Approval }
  | { kind: "agentless"; apis: AgentlessApi[]; rung: 1 | 2; why?: string }
  | Extract<PermitDecision, { kind: "ask" | "refuse" }>;

/** One API an agentless replay calls, and the address the run says it was recorded against (shown, never used). */
export interface AgentlessApi {
  api: string;
  recordedUrl?: string;
}

/** Why the run can't be replayed without its program, or the APIs it calls. */
export function agentlessApis(run: RunData | undefined): AgentlessApi[] | string {
  if (!run) return t("the run could not be read");
  try {
    const plan = planAgentless(new RunModel(run));
    const apis = [...new Set(plan.threads.map((th) => th.calls[0].codec.api))];
    return apis.map((api) => ({ api, recordedUrl: plan.recordedUrls.get(api) }));
  } catch (err) {
    return (err as Error).message.replace(/^can't replay without the program: /, "");
  }
}

/**
 * The APIs of the recorded calls that made an action and can be re-sent alone (rung 1: recorded in
 * full, relying on no provider state or provider-run tool), or why none can. Which one is re-sent
 * depends on the target; the worker checks that call before sending anything.
 */
export function oneCallApis(run: RunData | undefined): AgentlessApi[] | string {
  if (!run) return t("the run could not be read");
  const m = new RunModel(run);
  const deciding = new Set(m.actions.map((a) => a.decision));
  const apis = new Map<string, AgentlessApi>();
  let why = t("no recorded model call made an action");
  for (const d of m.decisions) {
    if (!deciding.has(d.id)) continue;
    try {
      const r = rebuildRequest(m, d.seq);
      const no = r.codec.notReplayable(r.body, m.value(r.decision.output));
      if (no) {
        why = t("call #{0} ({1}) {2}", d.seq, String(d.agent), no);
        continue;
      }
      const url = typeof r.record.url === "string" ? r.record.url : undefined;
      if (!apis.has(r.codec.api)) apis.set(r.codec.api, { api: r.codec.api, ...(url ? { recordedUrl: url } : {}) });
    } catch (err) {
      why = (err as Error).message;
    }
  }
  return apis.size ? [...apis.values()] : why;
}

/** Which rung a replay without the program climbs (2, else 1), or why neither can. */
export function agentlessRung(run: RunData | undefined): { rung: 1 | 2; apis: AgentlessApi[]; why?: string } | string {
  const apis = agentlessApis(run);
  if (typeof apis !== "string") return { rung: 2, apis };
  const one = oneCallApis(run);
  if (typeof one === "string") return t("{0}; one call can't be re-sent either: {1}", apis, one);
  return { rung: 1, apis: one, why: apis };
}

/** Can the run be replayed without its program, and how (for the runs tree and the run pickers)? */
export function replayableWithoutProgram(run: RunData): 1 | 2 | undefined {
  const r = agentlessRung(run);
  return typeof r === "string" ? undefined : r.rung;
}

/**
 * The recorded calls a replay of `target` re-sends, for the cost estimate, when that is surely
 * rung 1 (the run names no program to approve, and can't be re-simulated whole): the one call that
 * made the action. Else undefined: every call (an overestimate at worst).
 */
export function replayedCallsFor(run: RunData | undefined, target: string | undefined): RunModel["decisions"] | undefined {
  if (!run || !target) return undefined;
  const m = new RunModel(run);
  if (String(m.start.program ?? "") !== "") return undefined;
  const r = agentlessRung(run);
  if (typeof r === "string" || r.rung !== 1) return undefined;
  try {
    return [decidingCall(m, target).decision];
  } catch {
    return undefined;
  }
}

/** Was the run recorded by the gateway (`causeway gateway`, or `causeway record` behind it)? */
function recordedBehindGateway(run: RunData | undefined): boolean {
  const meta = run ? new RunModel(run).start.meta : undefined;
  return meta?.via === "gateway" || meta?.recorded_by === "causeway gateway";
}

/** The rung of a replay of `run` (recorded by `program`, resolved against `root`). */
export function decideRung(
  program: string,
  root: string,
  run: RunData | undefined,
  stored: readonly StoredApproval[],
  listedInSettings: boolean,
): RungDecision {
  const permit = program ? decidePermit(program, root, run, stored, listedInSettings) : undefined;
  if (permit?.kind === "run") return { kind: "program", approval: permit.approval };
  // a program that could re-run is offered for approval first, as before; a run recorded behind the
  // gateway is not (its program is never re-run: its tools ran in code no replay intercepts). A run
  // that claims the gateway only skips a question whose answer would run code: rung 2 runs none
  if (permit?.kind === "ask" && !recordedBehindGateway(run)) return permit;
  const apis = agentlessRung(run);
  if (typeof apis !== "string") return { kind: "agentless", ...apis };
  if (permit)
    return permit.kind === "refuse"
      ? { kind: "refuse", reason: t("{0}; replaying without the program is not possible either: {1}", permit.reason, apis) }
      : permit;
  return { kind: "refuse", reason: t("this run recorded no program, and replaying without it is not possible: {0}", apis) };
}

/** What the user configured for agentless replays (all from the user, none from a workspace or run). */
export interface EndpointConfig {
  /** The user's `causeway.replay.baseUrl` (its global value only). */
  baseUrl?: string;
  /** The key kept in VS Code's SecretStorage. */
  apiKey?: string;
}

const OFFICIAL: Record<string, string> = { anthropic: "https://api.anthropic.com", openai: "https://api.openai.com" };

function officialOrigin(api: string): string {
  return api === "anthropic.messages" ? OFFICIAL.anthropic : OFFICIAL.openai;
}

function origin(url: string | undefined): string | undefined {
  try {
    return url ? new URL(url).origin : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The endpoint a rung-2 replay sends to, or a message saying what to set: each API needs a base
 * URL (setting or environment), or, for a run recorded against the official endpoint, a key.
 */
export function resolveEndpoint(
  apis: readonly AgentlessApi[],
  cfg: EndpointConfig,
  env: NodeJS.ProcessEnv,
): { endpoint: AgentlessEndpoint } | { error: string } {
  const baseUrl = cfg.baseUrl?.trim() || undefined;
  if (baseUrl && !/^https?:\/\/[^/\s]+/i.test(baseUrl))
    return { error: t("causeway.replay.baseUrl is not an http(s) URL: {0}", JSON.stringify(baseUrl.slice(0, 200))) };
  for (const a of apis) {
    const anthropic = a.api === "anthropic.messages";
    const base = baseUrl ?? (anthropic ? env.ANTHROPIC_BASE_URL : env.OPENAI_BASE_URL);
    const key = cfg.apiKey ?? (anthropic ? env.ANTHROPIC_API_KEY : env.OPENAI_API_KEY);
    if (base) continue;
    const recorded = origin(a.recordedUrl);
    if (key && (!recorded || recorded === officialOrigin(a.api))) continue;
    const shown = a.recordedUrl ? JSON.stringify(a.recordedUrl.slice(0, 200)) : officialOrigin(a.api);
    return {
      error: t(
        "replaying without the program re-sends the run's model calls, recorded against {0}, to an endpoint you choose, never to an address from the run. Set one: the setting causeway.replay.baseUrl (user settings) and the command Causeway: Set Replay API Key, or {1} and {2} in VS Code's environment.",
        shown,
        anthropic ? "ANTHROPIC_BASE_URL" : "OPENAI_BASE_URL",
        anthropic ? "ANTHROPIC_API_KEY" : "OPENAI_API_KEY",
      ),
    };
  }
  return { endpoint: { ...(baseUrl ? { baseUrl } : {}), ...(cfg.apiKey ? { apiKey: cfg.apiKey } : {}) } };
}

/** The user's base URL setting: only its user (global) value; a workspace's settings can't choose where the key goes. */
export function userBaseUrl(inspected: { globalValue?: unknown } | undefined): string | undefined {
  const v = inspected?.globalValue;
  return typeof v === "string" && v.trim() ? v.trim() : undefined;
}
