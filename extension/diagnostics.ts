/**
 * Alerts and integrity problems in one DiagnosticCollection, kept in step with the runs: on the
 * event's line of events.jsonl, on the agent source line that recorded the call (when that file is
 * in the workspace), with relatedInformation pointing at the evidence (the untrusted input's event,
 * its blob). A quick fix runs Find the cause on the tool call.
 */
import * as vscode from "vscode";
import { runDiagnostics, siteDiagnostics, type DiagSpec, type FixTarget, type RunForDiagnostics } from "./logic/diagnostics";
import type { RunsChange } from "./logic/workspace-runs";
import { blobUri } from "./blobs";
import type { Services } from "./services";
import { COMMANDS } from "./logic/command-ids";

export const SOURCE = "Causeway";
/** Longest stretch of one diagnostics slice before it yields to the extension host (ms). */
const SLICE_MS = 20;

const SEVERITY: Record<DiagSpec["severity"], vscode.DiagnosticSeverity> = {
  error: vscode.DiagnosticSeverity.Error,
  warning: vscode.DiagnosticSeverity.Warning,
  info: vscode.DiagnosticSeverity.Information,
};

function lineRange(line: number): vscode.Range {
  const l = Math.max(0, line - 1);
  return new vscode.Range(l, 0, l, 10_000);
}

export class DiagnosticsController implements vscode.Disposable {
  readonly collection = vscode.languages.createDiagnosticCollection("causeway");
  /** Files each run put diagnostics on (its events.jsonl, tests.jsonl). */
  private runFiles = new Map<string, Map<string, DiagSpec[]>>();
  private siteFiles = new Map<string, DiagSpec[]>();
  /** Quick-fix targets by diagnostic (file, line, code, message). */
  private fixes = new Map<string, FixTarget[]>();
  private pending = new Set<string>();
  /** The publish under way: when it started and in how many slices so far. */
  private flushing: { started: number; slices: number } | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** Many runs are being analysed: their diagnostics wait for the end of it. */
  private waitingForAnalysis = false;
  private disposables: vscode.Disposable[] = [];

  constructor(private s: Services) {
    this.disposables.push(
      this.collection,
      s.store.onDidChange((c) => this.onStoreChange(c)),
    );
    this.disposables.push(
      vscode.languages.registerCodeActionsProvider(
        { scheme: "file" },
        { provideCodeActions: (doc, _r, ctx) => this.codeActions(doc, ctx) },
        { providedCodeActionKinds: [vscode.CodeActionKind.QuickFix] },
      ),
    );
  }

  private onStoreChange(c: RunsChange): void {
    for (const d of [...c.changed, ...c.removed]) this.pending.add(d);
    if (this.timer || this.waitingForAnalysis) return;
    // While many runs are being analysed (a workspace of a thousand runs opening), their
    // diagnostics are published once, when the analysis is over. Publishing every two seconds
    // cost the extension host twice the analysis itself (1.5 s against 0.7 s for 1,000 runs) and
    // sent the window every file's markers again each time, while it was drawing the Runs view.
    if (this.s.store.pending > 25) {
      this.waitingForAnalysis = true;
      void this.s.store.idle().then(() => {
        this.waitingForAnalysis = false;
        if (!this.timer && this.pending.size) this.timer = setTimeout(() => this.flush(), 0);
      });
      return;
    }
    this.timer = setTimeout(() => this.flush(), 150);
  }

  /** Recomputes every run's diagnostics (after a settings or workspace change). */
  refreshAll(): void {
    for (const e of this.s.store.list()) this.pending.add(e.dir);
    for (const d of this.runFiles.keys()) this.pending.add(d);
    if (!this.timer) this.timer = setTimeout(() => this.flush(), 0);
  }

  /** A run's analysis and current verify problems, if it has been analysed. */
  private forDiagnostics(dir: string): RunForDiagnostics | undefined {
    const e = this.s.store.get(dir);
    if (!e?.analysis) return undefined;
    return { dir: e.dir, analysis: e.analysis, verified: e.verified && e.verified.version === e.version ? e.verified.result.problems : undefined };
  }

  /**
   * Publishes the pending runs' diagnostics in slices of about SLICE_MS, yielding to the extension
   * host between them (1,000 runs took 0.2–0.8 s in one go, during which the Runs view and every
   * command waited), then the source lines' diagnostics, which aggregate over every run.
   */
  private flush(): void {
    this.timer = undefined;
    const t0 = Date.now();
    this.flushing ??= { started: t0, slices: 0 };
    this.flushing.slices++;
    try {
      // each run is read from the store when its turn comes (not once per slice for all runs: a
      // publish of 1,000 runs took some 15 slices, each of which listed every run first)
      let done = 0;
      for (const dir of this.pending) {
        // at least one run per slice, so a slow host still gets through them
        if (done++ && Date.now() - t0 >= SLICE_MS) {
          this.timer = setTimeout(() => this.flush(), 0);
          return;
        }
        this.pending.delete(dir);
        for (const file of this.runFiles.get(dir)?.keys() ?? []) this.collection.delete(vscode.Uri.file(file));
        this.runFiles.delete(dir);
        const r = this.forDiagnostics(dir);
        if (!r) continue;
        const byFile = group(runDiagnostics(r, this.s.sites));
        this.runFiles.set(dir, byFile);
        for (const [file, specs] of byFile)
          this.collection.set(
            vscode.Uri.file(file),
            specs.map((d) => this.toDiagnostic(d)),
          );
      }
      // source-line diagnostics aggregate over every run: recompute them all (cheap: alerts only)
      this.s.sites.reset();
      const runs = this.s.store.list().flatMap((e) => this.forDiagnostics(e.dir) ?? []);
      const sites = group(siteDiagnostics(runs, this.s.sites));
      for (const file of this.siteFiles.keys()) if (!sites.has(file)) this.collection.delete(vscode.Uri.file(file));
      for (const [file, specs] of sites)
        this.collection.set(
          vscode.Uri.file(file),
          specs.map((d) => this.toDiagnostic(d)),
        );
      this.siteFiles = sites;
      this.rebuildFixes();
    } catch (err) {
      this.pending.clear();
      this.s.log.error(`diagnostics: ${(err as Error)?.stack ?? err}`);
    }
    const { started, slices } = this.flushing;
    this.flushing = undefined;
    const ms = Date.now() - started;
    if (ms > 100) this.s.log.info(`diagnostics updated in ${ms} ms, ${slices} slice${slices === 1 ? "" : "s"} (${this.runFiles.size} runs with diagnostics)`);
  }

  private rebuildFixes(): void {
    this.fixes.clear();
    const add = (d: DiagSpec) => {
      if (d.fixes.length) this.fixes.set(fixKey(vscode.Uri.file(d.file), d.line, d.code, d.message), d.fixes);
    };
    for (const files of this.runFiles.values()) for (const specs of files.values()) specs.forEach(add);
    for (const specs of this.siteFiles.values()) specs.forEach(add);
  }

  private toDiagnostic(d: DiagSpec): vscode.Diagnostic {
    const diag = new vscode.Diagnostic(lineRange(d.line), d.message, SEVERITY[d.severity]);
    diag.source = SOURCE;
    diag.code = d.code;
    diag.relatedInformation = d.related.map((r) =>
      r.kind === "file"
        ? new vscode.DiagnosticRelatedInformation(new vscode.Location(vscode.Uri.file(r.file), lineRange(r.line)), r.message)
        : new vscode.DiagnosticRelatedInformation(new vscode.Location(blobUri(r.run, r.ref), new vscode.Position(0, 0)), r.message),
    );
    return diag;
  }

  private codeActions(doc: vscode.TextDocument, ctx: vscode.CodeActionContext): vscode.CodeAction[] {
    const out: vscode.CodeAction[] = [];
    const seen = new Set<string>();
    for (const diag of ctx.diagnostics) {
      if (diag.source !== SOURCE) continue;
      const code = typeof diag.code === "object" ? String(diag.code.value) : String(diag.code ?? "");
      const targets = this.fixes.get(fixKey(doc.uri, diag.range.start.line + 1, code, diag.message)) ?? [];
      for (const t of targets) {
        const k = `${t.run}\0${t.seq}`;
        if (seen.has(k)) continue;
        seen.add(k);
        const many = targets.length > 1 || seen.size > 1;
        const a = new vscode.CodeAction(
          many ? vscode.l10n.t("Find the cause of {0} in {1} (#{2})", t.tool, t.runId, t.seq) : vscode.l10n.t("Find the cause of {0}", t.tool),
          vscode.CodeActionKind.QuickFix,
        );
        a.command = { command: COMMANDS.findCause, title: vscode.l10n.t("Find the cause"), arguments: [{ run: t.run, seq: t.seq }] };
        a.diagnostics = [diag];
        a.isPreferred = seen.size === 1;
        out.push(a);
        const o = new vscode.CodeAction(vscode.l10n.t("Open {0} ({1} #{2}) in the investigator", t.tool, t.runId, t.seq), vscode.CodeActionKind.QuickFix);
        o.command = { command: COMMANDS.reveal, title: vscode.l10n.t("Open in investigator"), arguments: [{ run: t.run, seq: t.seq, action: true }] };
        o.diagnostics = [diag];
        out.push(o);
      }
    }
    return out;
  }

  dispose(): void {
    clearTimeout(this.timer);
    for (const d of this.disposables) d.dispose();
  }
}

function fixKey(uri: vscode.Uri, line: number, code: string, message: string): string {
  return `${uri.toString()}\0${line}\0${code}\0${message}`;
}

function group(specs: DiagSpec[]): Map<string, DiagSpec[]> {
  const m = new Map<string, DiagSpec[]>();
  for (const d of specs) {
    const list = m.get(d.file);
    if (list) list.push(d);
    else m.set(d.file, [d]);
  }
  return m;
}
