/**
 * The contract on pairs every pair-running command keeps (test, attribute, fix-check, matrix,
 * test-endpoint): `--n N` alone runs exactly N pairs; with `--n-max M`, the first look is at N (no
 * verdict before N pairs) and the test stops by M; with neither, the command's defaults.
 */
import { intFlag, type Parsed } from "./args";

/** The sentence each such command's --help carries (a test checks it). */
export const PAIRS_HELP = "--n N alone runs exactly N pairs; with --n-max, no verdict before N pairs (the first look is at N), at most --n-max";

export interface Pairs {
  /** The first look (and the default's starting size). */
  n: number;
  /** The most pairs a test may run. */
  nMax: number;
  /** No verdict before this many pairs: N when --n was given. */
  minPairs?: number;
  /** --n alone: every test runs exactly n pairs. */
  exact: boolean;
}

/** The pairs a command runs, from --n / --n-max and its defaults (nMax a function of n). */
export function pairsOf(p: Parsed, dflt: { n: number; nMax: (n: number) => number }): Pairs {
  const given = p.flags.n !== undefined;
  const n = intFlag(p, "n", dflt.n);
  if (p.flags["n-max"] !== undefined) return { n, nMax: intFlag(p, "n-max", n, n), ...(given ? { minPairs: n } : {}), exact: false };
  if (given) return { n, nMax: n, minPairs: n, exact: true };
  return { n, nMax: dflt.nMax(n), exact: false };
}
