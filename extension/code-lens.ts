/**
 * Code lenses above the SDK calls that recorded events (act, decide, observe, send): how many
 * runs hit the call, its alerts, and a tested cause with its effect. Lenses are placed by
 * provideCodeLenses and titled lazily in resolveCodeLens; a click opens the investigator on that
 * call. Off with causeway.codeLens.enabled.
 */
import * as vscode from "vscode";
import path from "node:path";
import { buildSiteIndex, lensTitle, lensTooltip, type LensItem, type SiteIndex } from "./logic/lenses";
import type { Services } from "./services";
import { COMMANDS } from "./logic/command-ids";

/** Lenses per line at most (a loop calling act() with many tools). */
const MAX_PER_LINE = 4;

class SiteLens extends vscode.CodeLens {
  constructor(
    range: vscode.Range,
    readonly file: string,
    readonly line: number,
    readonly index: number,
    readonly findCause: boolean,
  ) {
    super(range);
  }
}

export class CausewayLenses implements vscode.CodeLensProvider<SiteLens>, vscode.Disposable {
  private index: SiteIndex | undefined;
  private emitter = new vscode.EventEmitter<void>();
  readonly onDidChangeCodeLenses = this.emitter.event;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private disposables: vscode.Disposable[] = [];

  constructor(private s: Services) {
    this.disposables.push(
      this.emitter,
      vscode.languages.registerCodeLensProvider({ scheme: "file" }, this),
      s.store.onDidChange(() => this.invalidate()),
    );
  }

  /** The runs changed, or the setting did: lenses are recomputed when next asked for. */
  invalidate(): void {
    this.index = undefined;
    if (!this.timer) {
      this.timer = setTimeout(
        () => {
          this.timer = undefined;
          this.emitter.fire();
        },
        this.s.store.pending > 25 ? 2000 : 250, // many runs being analysed: fewer recomputations
      );
    }
  }

  private siteIndex(): SiteIndex {
    if (!this.index) {
      const runs = this.s.store.list().flatMap((e) => (e.analysis ? [{ dir: e.dir, analysis: e.analysis }] : []));
      this.index = buildSiteIndex(runs, this.s.sites);
    }
    return this.index;
  }

  private item(file: string, line: number, i: number): LensItem | undefined {
    return this.siteIndex().get(file)?.get(line)?.[i];
  }

  provideCodeLenses(doc: vscode.TextDocument): SiteLens[] {
    if (!this.s.settings().codeLens || this.s.store.size === 0) return [];
    const file = path.normalize(doc.uri.fsPath);
    const lines = this.siteIndex().get(file);
    if (!lines) return [];
    const out: SiteLens[] = [];
    for (const [line, items] of lines) {
      if (line > doc.lineCount) continue;
      const range = new vscode.Range(line - 1, 0, line - 1, 0);
      items.slice(0, MAX_PER_LINE).forEach((_, i) => out.push(new SiteLens(range, file, line, i, false)));
      // one Find the cause per line: for the call with the worst alert, when it has no tested cause
      const act = items.findIndex((it) => it.call === "act" && it.worst < 3 && !it.cause);
      if (act >= 0) out.push(new SiteLens(range, file, line, act, true));
    }
    return out;
  }

  resolveCodeLens(lens: SiteLens): SiteLens {
    const item = this.item(lens.file, lens.line, lens.index);
    if (!item) {
      lens.command = { title: vscode.l10n.t("Causeway: runs changed — reopen the file to refresh"), command: "" };
      return lens;
    }
    if (lens.findCause) {
      lens.command = {
        title: vscode.l10n.t("Find the cause"),
        command: COMMANDS.findCause,
        arguments: [{ run: item.focus.run, seq: item.focus.seq }],
        tooltip: vscode.l10n.t(
          "Test which input made {0} happen in {1} (paired replays)",
          item.tool ?? vscode.l10n.t("this call"),
          path.basename(item.focus.run),
        ),
      };
    } else {
      lens.command = {
        title: lensTitle(item),
        command: COMMANDS.reveal,
        arguments: [{ run: item.focus.run, seq: item.focus.seq, action: item.call === "act" }],
        tooltip: lensTooltip(item),
      };
    }
    return lens;
  }

  dispose(): void {
    clearTimeout(this.timer);
    for (const d of this.disposables) d.dispose();
  }
}
