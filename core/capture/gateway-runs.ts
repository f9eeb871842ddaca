/**
 * The runs a gateway records into, and how each recorded call finds its run and its agent.
 *
 * - A request naming its run (`x-causeway-run`) goes to that run. Any other request goes to the
 *   gateway's current run, and a new one begins when a request comes after `runGapMs` with no call
 *   in flight: one program run after another against a standalone gateway gives one run each. The
 *   run that ends is finished then (its unanswered tool calls recorded), so it verifies.
 * - `singleRun` (the built-in gateway of `causeway record`): every request goes to the one run,
 *   whatever it says; a program never chooses whose run it is.
 * - Tool results coming back in a request are untrusted unless their tool is trusted, and each is
 *   named by its tool and canonical arguments (`tool:fetch_doc {"name":"vendor-note"}`), as the
 *   preload names them, so two documents read with one tool are two inputs.
 */
import type http from "node:http";
import { canonical } from "../log/hash";
import type { Runtime } from "../sdk/runtime";
import { freeRunId } from "../sdk/system";
import type { Codec, ToolCallOut } from "../adapters/codec";
import { ConversationRecorder, openRun, runDir, type ResultNaming } from "../adapters/shared";
import { Handoffs } from "../adapters/handoffs";
import { RUN_ID_RE } from "../store/http";
import type { GatewayRunOptions } from "./gateway-options";

/** Default quiet time after which a request without `x-causeway-run` starts a new run. */
export const DEFAULT_RUN_GAP_MS = 120_000;

interface GatewayRun {
  rt: Runtime;
  recorders: Map<string, ConversationRecorder>;
  handoffs: Handoffs;
}

/** How a tool result coming back through the gateway is named and trusted. */
export function gatewayResultNaming(trusted: ReadonlySet<string>, untrusted: ReadonlySet<string>): (call: ToolCallOut) => Omit<ResultNaming, "mode"> {
  return (call) => ({ source: `tool:${call.name} ${canonical(call.args ?? {})}`, untrusted: untrusted.has(call.name) || !trusted.has(call.name) });
}

const stamp = (t: number) => new Date(t).toISOString().slice(0, 19).replace(/[-:]/g, "").replace("T", "-");

export class GatewayRuns {
  private readonly runs = new Map<string, GatewayRun>();
  private readonly dirs: string[] = [];
  private readonly ending: Promise<void>[] = [];
  private current: string | undefined;
  private inFlight = 0;
  private last = 0;
  private readonly now: () => number;
  private readonly gap: number;
  private readonly naming: (call: ToolCallOut) => Omit<ResultNaming, "mode">;

  constructor(private readonly opts: GatewayRunOptions) {
    this.now = opts.now ?? Date.now;
    this.gap = opts.runGapMs ?? DEFAULT_RUN_GAP_MS;
    if (!Number.isFinite(this.gap) || this.gap < 0) throw new Error(`runGapMs must be 0 (never) or more, got ${this.gap}`);
    const trusted = new Set(opts.trustedTools ?? []);
    const untrusted = new Set(opts.untrustedTools ?? []);
    const both = [...trusted].filter((t) => untrusted.has(t));
    if (both.length) throw new Error(`a tool can't be both trusted and untrusted: ${both.join(", ")}`);
    this.naming = gatewayResultNaming(trusted, untrusted);
  }

  /** A request has arrived (after its body): until {@link settled}, no gap can end its run. */
  begin(req: http.IncomingMessage): void {
    this.rollOver(req);
    this.inFlight++;
    this.last = this.now();
  }

  /** A request begun with {@link begin} has been answered, failed or dropped. */
  settled(): void {
    this.inFlight = Math.max(0, this.inFlight - 1);
    this.last = this.now();
  }

  /** The recorder of the request's agent in the request's run (opening either when new). */
  recorderFor(
    req: http.IncomingMessage,
    agent: (codec: Codec, body: unknown) => string,
    codec: Codec,
    body: unknown,
  ): { rec: ConversationRecorder; handoffs: Handoffs } {
    const run = this.runFor(req);
    const name = agent(codec, body);
    let rec = run.recorders.get(name);
    if (!rec) {
      const handoffs = run.handoffs;
      // one agent's output in another agent's prompt is a message between them
      rec = new ConversationRecorder(run.rt.agent(name), {
        untrustedTools: this.opts.untrustedTools,
        link: (value, a) => handoffs.link(value, a),
        nameResult: this.naming,
      });
      run.recorders.set(name, rec);
    }
    return { rec, handoffs: run.handoffs };
  }

  /** Folders of the runs recorded so far, in the order they began. */
  folders(): string[] {
    return [...this.dirs];
  }

  /** Records the calls still waiting for results and ends every run (run.end's outcome: `outcome`, else null). */
  async close(outcome?: Record<string, unknown>): Promise<void> {
    for (const key of [...this.runs.keys()]) this.end(key, outcome);
    await Promise.all(this.ending);
  }

  private headerRun(req: http.IncomingMessage): string | undefined {
    if (this.opts.singleRun) return undefined;
    const h = req.headers["x-causeway-run"];
    return typeof h === "string" && RUN_ID_RE.test(h) ? `run:${h}` : undefined;
  }

  /** A request without a run of its own after a quiet gap: the current run ends, the next begins on first use. */
  private rollOver(req: http.IncomingMessage): void {
    if (this.opts.singleRun || this.gap === 0 || this.headerRun(req) || this.current === undefined) return;
    if (this.inFlight === 0 && this.now() - this.last >= this.gap) {
      this.end(this.current);
      this.current = undefined;
    }
  }

  private runFor(req: http.IncomingMessage): GatewayRun {
    const named = this.headerRun(req);
    let key = named;
    if (!key) {
      this.current ??= `default:${this.dirs.length}`;
      key = this.current;
    }
    let run = this.runs.get(key);
    if (!run) {
      const base = named ? named.slice(4) : (this.opts.runId ?? `gateway-${stamp(this.now())}`);
      const rt = openRun({
        out: this.opts.outDir,
        runId: freeRunId(this.opts.outDir, base),
        program: this.opts.program,
        seed: this.opts.seed,
        sensitiveTools: this.opts.sensitiveTools,
        untrustedTools: this.opts.untrustedTools,
        captureSites: false,
        root: this.opts.root,
        meta: { recorded_by: "causeway gateway", ...(this.opts.meta ?? {}) },
        redactor: this.opts.redactor,
      });
      run = { rt, recorders: new Map(), handoffs: new Handoffs() };
      this.runs.set(key, run);
      const dir = runDir(rt);
      if (dir) this.dirs.push(dir);
    }
    return run;
  }

  private end(key: string, outcome?: Record<string, unknown>): void {
    const run = this.runs.get(key);
    if (!run) return;
    this.runs.delete(key);
    for (const rec of run.recorders.values()) rec.closePending();
    this.ending.push(run.rt.finish(outcome));
  }
}
