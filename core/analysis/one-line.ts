/** A value as one short line of text, for sentences and timeline rows. */
import { textOf } from "../graph/graph";

export function short(v: unknown, n = 90): string {
  const s = textOf(v).replace(/\n/g, " ");
  return s.length <= n ? s : s.slice(0, n - 1) + "…";
}
