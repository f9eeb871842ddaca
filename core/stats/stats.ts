/**
 * Statistics for paired causal replay.
 *
 * A causal test replays the same system N times in pairs: once *with* a
 * suspect input and once *without* it, and records whether a target action
 * happened in each arm. Each arm's rate gets a Wilson score interval, and the
 * difference `p_with − p_without` gets Newcombe's hybrid score interval
 * (method 10). Newcombe's interval treats the two arms as independent samples:
 * it ignores the pairing, so on paired data (where the two arms of a pair are
 * usually positively correlated) it is conservative — wider than it needs to
 * be, never narrower. The exact McNemar test does use the pairing: it looks
 * only at discordant pairs (target with the input only, `b`, or without it
 * only, `c`) and is exact under the null hypothesis that both kinds of
 * discordance are equally likely. All intervals are two-sided normal-theory
 * score intervals at level `1 − alpha`; when an interval is computed at
 * several sample sizes (sequential looks, e.g. {@link sequentialLooks}) or
 * for several suspects, use {@link zFor} with `k = looks × family size`: the
 * Bonferroni correction keeps the overall error rate at most `alpha`, which
 * is what makes stopping as soon as an interval is decisive safe.
 * {@link benjaminiHochberg} controls the false discovery rate across many
 * p-values instead. Every function here is pure and dependency-free.
 *
 * This module gathers the folder's parts in one import: normal.ts (the distribution),
 * intervals.ts, exact-tests.ts, corrections.ts (Bonferroni looks, Benjamini–Hochberg) and
 * verdicts.ts (verdict, role, suggested sample size).
 *
 * @module
 */
export { Z95, normalCdf, normalQuantile } from "./normal";
export { wilson, newcombe, type Interval } from "./intervals";
export { mcnemarExact, pairedSummary, type PairedSummary } from "./exact-tests";
export { zFor, sequentialLooks, benjaminiHochberg } from "./corrections";
export { verdictFor, roleFor, suggestedN, type Verdict, type Role } from "./verdicts";
