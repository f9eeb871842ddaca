/**
 * One recorded SDK call: run the client's own method, then record the exchange — at once for a
 * plain response, or when a streamed response has been read to its end (the stream object the SDK
 * returned is handed back, its chunks passing through unchanged).
 */
import { performance } from "node:perf_hooks";
import type { Codec } from "./codec";
import { errorText, type ConversationRecorder } from "./shared";

/** Most stream events kept to rebuild the final response; beyond this the exchange is recorded as cut short. */
const MAX_STREAM_EVENTS = 200_000;

export async function tracedCall(rec: ConversationRecorder, codec: Codec, body: unknown, invoke: () => unknown, url?: string): Promise<unknown> {
  const t0 = performance.now();
  let res: unknown;
  try {
    res = await invoke();
  } catch (err) {
    rec.exchange(codec, body, { error: errorText(err), durationMs: performance.now() - t0, url });
    throw err;
  }
  const streaming = !!body && typeof body === "object" && (body as { stream?: unknown }).stream === true;
  const iterable = !!res && typeof (res as { [Symbol.asyncIterator]?: unknown })[Symbol.asyncIterator] === "function";
  if (!streaming || !iterable) {
    rec.exchange(codec, body, { response: res, durationMs: performance.now() - t0, url });
    return res;
  }
  const stream = res as AsyncIterable<unknown> & Record<PropertyKey, unknown>;
  const inner = stream[Symbol.asyncIterator].bind(stream) as () => AsyncIterator<unknown>;
  let recorded = false;
  const events: unknown[] = [];
  const record = (error?: string) => {
    if (recorded) return;
    recorded = true;
    if (error !== undefined) rec.exchange(codec, body, { error, durationMs: performance.now() - t0, url });
    else rec.exchange(codec, body, { response: codec.accumulate(events), durationMs: performance.now() - t0, url });
  };
  Object.defineProperty(stream, Symbol.asyncIterator, {
    configurable: true,
    value: async function* () {
      const it = inner();
      let done = false;
      try {
        for (;;) {
          const r = await it.next();
          if (r.done) {
            done = true;
            break;
          }
          if (events.length < MAX_STREAM_EVENTS) events.push(r.value);
          yield r.value;
        }
        record();
      } catch (err) {
        done = true;
        record(errorText(err));
        throw err;
      } finally {
        // read only in part: close the connection and record what arrived
        if (!done) await it.return?.();
        record();
      }
    },
  });
  return stream;
}
