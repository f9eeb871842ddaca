/**
 * The ingest validator: decides whether a batch `{events, blobs}` sent to `POST /v1/ingest` may be
 * appended to a stored run, before anything is written. Pure: the stored run is described by a
 * {@link StoredRun}, the batch is the lossless parse of the body (so hashes are recomputed over
 * exactly the numbers that were sent).
 *
 * The batch is untrusted: nothing in it is looked up on a prototype or converted to text unchecked,
 * and anything the checks did not foresee still ends as a 422, never as an exception.
 *
 * Refused, with the status the client can act on:
 *  - 422  not a batch (shape), a value that is not plain JSON (a "__proto__" key, an object that
 *         is not a plain one), nesting deeper than the limit, a malformed event (common fields, the fields its type needs and their types, token
 *         counts), an event whose hash does not recompute (edited), a blob whose content does not
 *         hash to its ref (forged), a ref to a blob neither stored nor sent, a blob no event of the
 *         batch names (unreferenced), more events or blobs than one batch may hold;
 *  - 409  (with the run's head) a batch that does not continue the stored chain: a gap, a fork
 *         (another event at a stored position, or a prev_hash that links elsewhere), a replayed
 *         batch (events already stored), a duplicate event id, anything after run.end.
 */
import { SCHEMAS, KNOWN_TYPES, fieldProblems, refsOf } from "../log/events";
import { ZERO_HASH, eventHash, isRef, refOf } from "../log/hash";
import { PyFloat, type JsonValue } from "../log/pyjson";
import { RUN_ID_RE } from "./http";
import { sanitizeEvent } from "../log/sanitize";
import { isJsonObject } from "../log/pyjson";

/** What the validator needs to know of the stored run. */
export interface StoredRun {
  /** The last stored event, or null when the run is new. */
  head: RunHead | null;
  /** Hash of the stored event at seq, if stored. */
  hashAt(seq: number): string | undefined;
  hasId(id: string): boolean;
  hasBlob(ref: string): boolean;
  /** The stored run has its run.end. */
  ended: boolean;
}

export interface RunHead {
  seq: number;
  hash: string;
}

export interface IngestLimits {
  maxEvents: number;
  maxBlobs: number;
  /** Deepest nesting of the batch (default {@link MAX_BATCH_DEPTH}). */
  maxDepth?: number;
}

export const DEFAULT_LIMITS: IngestLimits = { maxEvents: 10_000, maxBlobs: 10_000 };

export type Event = Record<string, JsonValue>;

export type IngestVerdict =
  | { ok: true; runId: string; events: Event[]; blobs: Map<string, JsonValue>; head: RunHead }
  | { ok: false; status: 400 | 409 | 422; error: string; head?: RunHead | null };

const ID_RE = /^[A-Za-z0-9_-]{1,128}$/;
const short = (s: string, n = 24) => (s.length > n ? s.slice(0, n) + "…" : s);
const own = (o: object, k: string): boolean => Object.prototype.hasOwnProperty.call(o, k);

/** A field's value as short text for a message, whatever it holds (never calls the value's own methods). */
export function describeValue(v: unknown, n = 24): string {
  if (typeof v === "string") return JSON.stringify(short(v, n));
  if (typeof v === "number" || typeof v === "boolean" || v === null || v === undefined) return String(v);
  if (typeof v === "bigint") return short(v.toString(), n);
  if (v instanceof PyFloat) return String(v.value);
  return Array.isArray(v) ? "an array" : "an object";
}

/** Deepest nesting {@link validateBatch} accepts (the collector refuses deeper bodies before parsing). */
export const MAX_BATCH_DEPTH = 64;

/**
 * What keeps `body` from being plain JSON data, walked without recursion: an object whose
 * prototype is not Object's, a "__proto__" key, or nesting deeper than `maxDepth`.
 */
export function notPlainJson(body: unknown, maxDepth = MAX_BATCH_DEPTH): string | undefined {
  const stack: [unknown, number][] = [[body, 0]];
  while (stack.length) {
    const [v, d] = stack.pop()!;
    if (v === null || typeof v !== "object" || v instanceof PyFloat) continue;
    if (d >= maxDepth) return `the batch nests deeper than ${maxDepth} levels`;
    if (Array.isArray(v)) {
      if (Object.getPrototypeOf(v) !== Array.prototype) return "the batch holds an array that is not plain JSON";
      for (const x of v) stack.push([x, d + 1]);
      continue;
    }
    if (Object.getPrototypeOf(v) !== Object.prototype) return "the batch holds an object that is not plain JSON";
    // the parser keeps a "__proto__" key as data; the collector takes none, so no consumer of a
    // stored run that copies objects with assignment or spread can have its prototype set by one
    if (own(v, "__proto__")) return 'the batch holds a "__proto__" key';
    for (const k of Object.keys(v)) stack.push([(v as Record<string, unknown>)[k], d + 1]);
  }
  return undefined;
}

/** The run a batch is for, or undefined when the batch doesn't say (checked fully by {@link validateBatch}). */
export function batchRunId(body: JsonValue): string | undefined {
  if (!isJsonObject(body) || !own(body, "events") || !Array.isArray(body.events)) return undefined;
  const first = body.events[0];
  return isJsonObject(first) && own(first, "run_id") && typeof first.run_id === "string" && RUN_ID_RE.test(first.run_id) ? first.run_id : undefined;
}

/** Checks one batch against the stored run; nothing is written here. */
export function validateBatch(body: JsonValue, stored: StoredRun, limits: IngestLimits = DEFAULT_LIMITS): IngestVerdict {
  try {
    return checkBatch(body, stored, limits);
  } catch (err) {
    // a shape no check foresaw: still the client's batch at fault, and still nothing written
    return { ok: false, status: 422, error: `the batch is malformed (${err instanceof Error ? short(err.message, 80) : "unreadable"})`, head: stored.head };
  }
}

function checkBatch(body: JsonValue, stored: StoredRun, limits: IngestLimits): IngestVerdict {
  // every refusal carries the run's head, so a client can tell where the run stands
  const refuse = (status: 400 | 409 | 422, error: string): IngestVerdict => ({ ok: false, status, error, head: stored.head });
  const notPlain = notPlainJson(body, limits.maxDepth ?? MAX_BATCH_DEPTH);
  if (notPlain) return refuse(422, notPlain);
  if (
    !isJsonObject(body) ||
    !own(body, "events") ||
    !Array.isArray(body.events) ||
    !body.events.length ||
    (own(body, "blobs") && body.blobs !== null && !isJsonObject(body.blobs))
  ) {
    return refuse(422, 'expected {"events": [at least one event], "blobs": {ref: value}}');
  }
  const events = body.events;
  const blobsIn = own(body, "blobs") && isJsonObject(body.blobs) ? body.blobs : {};
  const blobKeys = Object.keys(blobsIn);
  if (events.length > limits.maxEvents) return refuse(422, `a batch holds at most ${limits.maxEvents} events (got ${events.length})`);
  if (blobKeys.length > limits.maxBlobs) return refuse(422, `a batch holds at most ${limits.maxBlobs} blobs (got ${blobKeys.length})`);

  // blobs: each must hash to its ref
  const blobs = new Map<string, JsonValue>();
  for (const ref of blobKeys) {
    if (!isRef(ref)) return refuse(422, `blob key ${JSON.stringify(short(ref))} is not a sha256: ref`);
    let actual: string;
    try {
      actual = refOf(blobsIn[ref]);
    } catch {
      actual = "";
    }
    if (actual !== ref) return refuse(422, `blob ${short(ref, 20)} does not hash to its ref (forged or damaged)`);
    blobs.set(ref, blobsIn[ref]);
  }

  // each event on its own: fields, types, one run
  let runId: string | undefined;
  for (const [i, e] of events.entries()) {
    if (!isJsonObject(e)) return refuse(422, `event ${i} of the batch is not an object`);
    const at = `event ${i} (seq ${typeof e.seq === "number" ? e.seq : "?"})`;
    // the type and schema first: the field lists are looked up by them
    if (typeof e.type !== "string" || !own(e, "type")) return refuse(422, `${at}: field "type" should be a string (got ${describeValue(e.type)})`);
    if (!KNOWN_TYPES.has(e.type)) return refuse(422, `${at}: unknown event type ${describeValue(e.type)}`);
    if (typeof e.schema !== "string" || !SCHEMAS.has(e.schema)) return refuse(422, `${at}: unknown schema ${describeValue(e.schema)}`);
    const problems = fieldProblems(e);
    if (problems.length) return refuse(422, `${at}: ${problems[0]}`);
    // what the reader would read differently (and report) is refused here, so a stored run reads clean
    const misread = sanitizeEvent(e as Record<string, unknown>, i + 1).changed;
    if (misread.length)
      return refuse(422, `${at}: field${misread.length === 1 ? "" : "s"} ${misread.map((k) => `"${short(k, 40)}"`).join(", ")} of the wrong type`);
    if (!Number.isSafeInteger(e.seq) || (e.seq as number) < 0) return refuse(422, `${at}: seq must be an integer ≥ 0`);
    if (!ID_RE.test(e.id as string)) return refuse(422, `${at}: id must be 1–128 letters, digits, _ or -`);
    if (!(e.agent as string).length || (e.agent as string).length > 200) return refuse(422, `${at}: agent must be 1–200 characters`);
    if ((e.ts as string).length > 64) return refuse(422, `${at}: ts is too long`);
    if (!RUN_ID_RE.test(e.run_id as string)) return refuse(422, `${at}: run_id must be a folder name (letters, digits, ._-; at most 128)`);
    runId ??= e.run_id as string;
    if (e.run_id !== runId) return refuse(422, `${at}: one batch must belong to one run (${short(runId)} and ${describeValue(e.run_id)})`);
    const usage = e.usage;
    if (e.type === "decision" && usage !== undefined && usage !== null) {
      if (!isJsonObject(usage)) return refuse(422, `${at}: usage must be an object`);
      for (const k of ["input_tokens", "output_tokens"]) {
        if (usage[k] !== undefined && !(Number.isSafeInteger(usage[k]) && (usage[k] as number) >= 0))
          return refuse(422, `${at}: usage.${k} must be an integer ≥ 0`);
      }
    }
    if (own(e, "request") && !isRef(e.request)) return refuse(422, `${at}: request must be a sha256: ref`);
  }
  const evs = events as Event[];

  // the chain: continue the stored head, link by link, each hash recomputed
  if (stored.ended) return refuse(409, "the run has ended (run.end is stored): nothing may follow it");
  let expect = stored.head ? stored.head.seq + 1 : 0;
  let prev = stored.head ? stored.head.hash : ZERO_HASH;
  const first = evs[0];
  if ((first.seq as number) < expect) {
    const have = stored.hashAt(first.seq as number);
    if (have !== undefined && have === first.hash)
      return refuse(409, `seq ${first.seq} is already stored (a replayed batch); the run's head is seq ${expect - 1}`);
    return refuse(409, `seq ${first.seq} conflicts with the stored event at that position (a fork); the run's head is seq ${expect - 1}`);
  }
  for (const e of evs) {
    if (e.seq !== expect) {
      return refuse(
        409,
        (e.seq as number) > expect ? `expected seq ${expect}, got ${e.seq} (a gap: events are missing)` : `seq ${e.seq} appears twice in the batch`,
      );
    }
    if (e.prev_hash !== prev) return refuse(409, `seq ${e.seq}: prev_hash does not link to the stored chain (a fork)`);
    if (eventHash(e) !== e.hash) return refuse(422, `seq ${e.seq}: the event does not match its hash (edited)`);
    expect++;
    prev = e.hash;
  }

  // ids: new in the run
  const ids = new Set<string>();
  for (const e of evs) {
    const id = e.id as string;
    if (ids.has(id) || stored.hasId(id)) return refuse(409, `seq ${e.seq}: event id ${short(id, 12)} is already used in the run`);
    ids.add(id);
  }

  // refs: every named blob exists; every sent blob is named
  const named = new Set<string>();
  for (const e of evs) {
    for (const r of refsOf(e)) {
      if (!isRef(r)) return refuse(422, `seq ${e.seq}: ${describeValue(r)} is not a sha256: ref`);
      if (!blobs.has(r) && !stored.hasBlob(r)) return refuse(422, `seq ${e.seq}: blob ${short(r, 20)} is neither stored nor sent`);
      named.add(r);
    }
  }
  for (const ref of blobs.keys()) if (!named.has(ref)) return refuse(422, `blob ${short(ref, 20)} is sent but no event of the batch names it`);

  const last = evs[evs.length - 1];
  return { ok: true, runId: runId!, events: evs, blobs, head: { seq: last.seq as number, hash: last.hash as string } };
}
