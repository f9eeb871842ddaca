/**
 * How numbers read, everywhere: the CLI, the extension (lenses, diagnostics, notifications) and the
 * webview format effects and rates with these, so a figure reads the same on every surface.
 * Pure functions, no Node or DOM: the webview bundles this file too.
 */

/** Is `x` a finite number? */
const finite = (x: unknown): x is number => typeof x === "number" && Number.isFinite(x);

/**
 * A signed effect with two decimals: +0.80, -0.15, +0.00. `ascii` (the CLI, plain text; the
 * reference's `%+.2f`) or `unicode` (the investigator: a true minus sign, −0.15, and no −0.00).
 * Not a number: `missing`.
 */
export function signed(x: unknown, style: "ascii" | "unicode" = "ascii", missing = "?"): string {
  if (!finite(x)) return missing;
  if (style === "ascii") return (x >= 0 ? "+" : "") + x.toFixed(2);
  const r = Math.round(x * 100) / 100;
  const s = Math.abs(r).toFixed(2);
  return r < 0 ? `\u2212${s}` : `+${s}`;
}

/** A 95% interval of effects: [+0.63, +0.90]. */
export function signedInterval(ci: readonly [number, number] | null | undefined, style: "ascii" | "unicode" = "ascii", missing = "?"): string {
  if (!ci) return missing;
  return `[${signed(ci[0], style, missing)}, ${signed(ci[1], style, missing)}]`;
}

/** A rate as a whole percentage: 0.8 → 80%. Not a number: `missing`. */
export function pct(x: unknown, missing = "?"): string {
  return finite(x) ? `${Math.round(x * 100)}%` : missing;
}
