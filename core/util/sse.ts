/** Server-sent events, as a streamed model response arrives whole. */

/**
 * The JSON of each event's `data:` lines (joined by newlines, one leading space dropped), the
 * end-of-stream `[DONE]` skipped. An event whose data is not JSON throws, unless `skipBad` is set:
 * then it is dropped.
 */
export function parseSse(text: string, opts: { skipBad?: boolean } = {}): unknown[] {
  const out: unknown[] = [];
  for (const block of text.split(/\r?\n\r?\n/)) {
    const data = block
      .split(/\r?\n/)
      .filter((l) => l.startsWith("data:"))
      .map((l) => l.slice(5).replace(/^ /, ""))
      .join("\n");
    if (!data || data === "[DONE]") continue;
    if (!opts.skipBad) {
      out.push(JSON.parse(data));
      continue;
    }
    try {
      out.push(JSON.parse(data));
    } catch {
      /* not JSON: dropped */
    }
  }
  return out;
}
