/**
 * Localised strings for the vscode-free parts of the extension. The extension installs
 * vscode.l10n.t at activation ({@link setTranslator}); tests and the CLI keep the default, which
 * fills "{0}"-style placeholders as vscode.l10n.t does when no translation bundle is loaded.
 */
export type Translate = (message: string, ...args: (string | number | boolean)[]) => string;

export const untranslated: Translate = (message, ...args) =>
  message.replace(/\{(\d+)\}/g, (m: string, i: string) => (Number(i) < args.length ? String(args[Number(i)]) : m));

let current: Translate = untranslated;

/** Called once at activation with vscode.l10n.t. */
export function setTranslator(t: Translate): void {
  current = t;
}

/** A user-facing string, translated (literal messages, so that l10n tooling can extract them). */
export const t: Translate = (message, ...args) => current(message, ...args);

/** "1 run" / "3 runs": `one` and `many` are literal messages with {0} for the count. */
export function count(n: number, one: string, many: string): string {
  return n === 1 ? current(one, n) : current(many, n);
}
