// Random mutations of a run folder, for the fuzz test (test/unit/hardening/fuzz.test.ts) and the
// one-off CLI fuzz (bench/fuzz-cli.mjs). Deterministic for a seed. Plain JS so both can use it.
//
// Kinds: byte flips, truncations, line deletes/duplicates/swaps, cut trailing lines, fields of
// re-sealed events (hash and chain recomputed, so the damage reaches the analyses) set to hostile
// values (deep nesting, prototype names, objects with their own toString, type swaps, 1 MB of word
// characters), blob flips/truncations/deletions/deep blobs/links to /dev/zero/FIFOs, and
// tests.jsonl damage.
import fs from "node:fs";
import path from "node:path";
import crypto from "node:crypto";
import { spawnSync } from "node:child_process";

export function rng(seed) {
  let s = seed | 0;
  const next = () => {
    s = (s + 0x6d2b79f5) | 0;
    let t = Math.imul(s ^ (s >>> 15), 1 | s);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n) => Math.floor(next() * n);
  const pick = (a) => a[int(a.length)];
  return { next, int, pick };
}

const sha = (s) => crypto.createHash("sha256").update(s).digest("hex");

/** Canonical JSON (sorted keys, compact): what our re-sealed lines and blobs are written as. */
function canon(v) {
  if (v === null || typeof v !== "object") return JSON.stringify(v) ?? "null";
  if (Array.isArray(v)) return "[" + v.map(canon).join(",") + "]";
  return (
    "{" +
    Object.keys(v)
      .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
      .map((k) => JSON.stringify(k) + ":" + canon(v[k]))
      .join(",") +
    "}"
  );
}

const PROTO = ["toString", "__proto__", "constructor", "hasOwnProperty", "valueOf", "isPrototypeOf", "__defineGetter__"];
const RAW = Symbol("raw"); // a value written as raw JSON text (too deep for any serialiser)

function hostileValue(r) {
  switch (r.int(12)) {
    case 0:
      return { [RAW]: "[".repeat(5000 + r.int(3000)) + "1" + "]".repeat(5000 + 0) };
    case 1:
      return r.pick(PROTO);
    case 2:
      return { toString: 1, valueOf: 2 };
    case 3:
      return r.pick([null, 0, -1, 1.5, 1e308, true, false, "", [], {}]);
    case 4:
      return "a".repeat(1 << 20);
    case 5:
      return { __proto__x: 1, ["__proto__"]: { toString: "x" } };
    case 6:
      return [{ toString: 1 }, "x", 7];
    case 7:
      return r.int(1e9);
    case 8:
      return { [RAW]: '{"a":' + '{"a":'.repeat(600) + "1" + "}".repeat(601) };
    case 9:
      return "x@".repeat(1000) + "y".repeat(10000);
    case 10:
      return { file: { toString: 1 }, line: "x" };
    default:
      return r.pick(PROTO) + ":" + "z".repeat(r.int(50));
  }
}

/** JSON text of a value that may hold RAW parts (fixing the too-short closing of case 0 too). */
function textOf(v) {
  if (v && typeof v === "object" && RAW in v) {
    const t = v[RAW];
    const open = t.length - t.replace(/^\[+/, "").length;
    if (open) return "[".repeat(open) + "1" + "]".repeat(open);
    return t;
  }
  return canon(v);
}

function tooDeep(t) {
  let d = 0;
  let str = false;
  for (let i = 0; i < t.length; i++) {
    const c = t[i];
    if (str) {
      if (c === "\\") i++;
      else if (c === '"') str = false;
    } else if (c === '"') str = true;
    else if (c === "[" || c === "{") {
      if (++d > 400) return true;
    } else if (c === "]" || c === "}") d--;
  }
  return false;
}

/** A regular file (never read a FIFO or a link to /dev/zero an earlier mutation made). */
function regular(file) {
  try {
    return fs.lstatSync(file).isFile();
  } catch {
    return false;
  }
}

function readEvents(dir) {
  const text = fs.readFileSync(path.join(dir, "events.jsonl"), "utf8");
  const out = [];
  for (const l of text.split("\n")) {
    if (tooDeep(l)) continue; // an earlier deep line: no recursive serialiser here walks it
    try {
      const e = JSON.parse(l);
      if (e && typeof e === "object" && !Array.isArray(e)) out.push(e);
    } catch {
      /* a line an earlier mutation broke: left out */
    }
  }
  return out.length ? out : [{ type: "run.start" }];
}

/** Writes events with seq, prev_hash and hash recomputed; `raw` maps event index → {field, text}. */
function reseal(dir, evs, raw = new Map()) {
  let prev = "0".repeat(64);
  const out = [];
  evs.forEach((e, i) => {
    const x = { ...e, seq: i, prev_hash: prev };
    delete x.hash;
    const rw = raw.get(i);
    if (rw) x[rw.field] = "\u0000RAW\u0000";
    let c = canon(x);
    if (rw) c = c.replace('"\\u0000RAW\\u0000"', rw.text);
    const h = sha(c);
    // the line: the canonical text with the hash added as the last member (keys stay sorted: "hash" < others? no matter: the hash is over the text without it)
    out.push(c.slice(0, -1) + (c.length > 2 ? "," : "") + '"hash":"' + h + '"}');
    prev = h;
  });
  fs.writeFileSync(path.join(dir, "events.jsonl"), out.join("\n") + "\n");
}

function blobFiles(dir) {
  try {
    return fs
      .readdirSync(path.join(dir, "blobs"))
      .filter((n) => n.endsWith(".json"))
      .map((n) => path.join(dir, "blobs", n));
  } catch {
    return [];
  }
}

function flipBytes(file, r, n) {
  if (!regular(file)) return;
  let buf;
  try {
    buf = fs.readFileSync(file);
  } catch {
    return;
  }
  if (!buf.length) return;
  for (let k = 0; k < n; k++) buf[r.int(buf.length)] = r.pick([0x22, 0x7b, 0x7d, 0x5b, 0x5d, 0x2c, 0x3a, 0x5c, 0x0a, 0x00, 0xff, 0x30 + r.int(10), r.int(256)]);
  fs.writeFileSync(file, buf);
}

const mkfifo = (p) => spawnSync("mkfifo", [p]).status === 0;

/** One mutation of the run in `dir` (in place); returns what was done. */
export function mutate(dir, r, { specials = true } = {}) {
  const ev = path.join(dir, "events.jsonl");
  let kind = r.int(16);
  if (kind <= 11 && kind !== 10 && !regular(ev)) kind = 15; // events.jsonl is no longer a file
  switch (kind) {
    case 0: {
      const n = 1 + r.int(8);
      flipBytes(ev, r, n);
      return `flip ${n} bytes of events.jsonl`;
    }
    case 1: {
      const size = fs.statSync(ev).size;
      fs.truncateSync(ev, r.int(size));
      return "truncate events.jsonl";
    }
    case 2: {
      const ls = fs.readFileSync(ev, "utf8").split("\n").filter(Boolean);
      const i = r.int(ls.length);
      const j = r.int(ls.length);
      const op = r.int(3);
      if (op === 0) ls.splice(i, 1);
      else if (op === 1) ls.splice(i, 0, ls[j]);
      else [ls[i], ls[j]] = [ls[j], ls[i]];
      fs.writeFileSync(ev, ls.join("\n") + "\n");
      return ["delete", "duplicate", "swap"][op] + " lines";
    }
    case 3: {
      const ls = fs.readFileSync(ev, "utf8").split("\n").filter(Boolean);
      const k = 1 + r.int(Math.min(5, ls.length));
      fs.writeFileSync(ev, ls.slice(0, -k).join("\n") + "\n");
      return `cut the last ${k} lines`;
    }
    case 4:
    case 5:
    case 6:
    case 7: {
      // a field of a re-sealed event set to a hostile value
      const evs = readEvents(dir);
      const i = r.int(evs.length);
      const keys = Object.keys(evs[i]).filter((k) => k !== "hash" && k !== "prev_hash" && k !== "seq");
      const field = r.next() < 0.8 ? r.pick(keys) : r.pick(["extra", "site", "guard", "usage", "meta", ...PROTO]);
      const v = hostileValue(r);
      const raw = new Map();
      if (v && typeof v === "object" && RAW in v) raw.set(i, { field, text: textOf(v) });
      else evs[i][field] = v;
      reseal(dir, evs, raw);
      return `event ${i}: ${field} = ${textOf(v).slice(0, 40)}`;
    }
    case 8: {
      // every event of one type gets a prototype name somewhere
      const evs = readEvents(dir);
      const f = r.pick(["type", "agent", "tool", "source", "to", "model", "id", "decision", "parent", "program"]);
      const name = r.pick(PROTO);
      for (const e of evs) if (f in e || f === "type") e[f] = name;
      reseal(dir, evs);
      return `every ${f} = ${name}`;
    }
    case 9: {
      // context / refs swapped to odd types
      const evs = readEvents(dir);
      const d = evs.filter((e) => e.type === "decision");
      const e = d.length ? r.pick(d) : r.pick(evs);
      e[r.pick(["context", "output", "ablated", "args_ref", "ref", "result_ref"])] = hostileValue(r);
      if (Array.isArray(e.context) && e.context.length && r.next() < 0.5)
        e.context[0] = r.pick([7, "x", null, { ref: { toString: 1 } }, { source: ["a"], ref: e.context[0]?.ref }]);
      reseal(dir, evs);
      return "context or refs of a decision";
    }
    case 10: {
      const b = blobFiles(dir);
      if (!b.length) return "no blobs";
      const f = r.pick(b);
      if (!regular(f)) return "blob not a file";
      const op = r.int(3);
      if (op === 0) flipBytes(f, r, 1 + r.int(4));
      else if (op === 1) fs.truncateSync(f, r.int(fs.statSync(f).size));
      else fs.rmSync(f);
      return ["flip", "truncate", "delete"][op] + " a blob";
    }
    case 11: {
      // a correctly hashed deep or hostile blob, named by a re-sealed event
      const evs = readEvents(dir);
      const acts = evs.filter((e) => e.type === "action" || e.type === "input" || e.type === "message");
      if (!acts.length) return "no event with a ref";
      const e = r.pick(acts);
      const v = r.next() < 0.5 ? { [RAW]: "[".repeat(6000) } : hostileValue(r);
      const text = '{"v":' + textOf(v) + "}";
      const hex = sha(text);
      fs.mkdirSync(path.join(dir, "blobs"), { recursive: true });
      fs.writeFileSync(path.join(dir, "blobs", hex + ".json"), text);
      if (e.type === "action") e.args_ref = "sha256:" + hex;
      else e.ref = "sha256:" + hex;
      reseal(dir, evs);
      return "a hashed hostile blob";
    }
    case 12: {
      if (!specials) return "skipped special file";
      const b = blobFiles(dir);
      const target = r.next() < 0.5 && b.length ? r.pick(b) : path.join(dir, "blobs", "f".repeat(64) + ".json");
      fs.rmSync(target, { force: true });
      fs.mkdirSync(path.dirname(target), { recursive: true });
      const op = r.int(3);
      if (op === 0) fs.symlinkSync("/dev/zero", target);
      else if (op === 1) mkfifo(target);
      else fs.mkdirSync(target);
      return ["link to /dev/zero", "FIFO", "directory"][op] + " as a blob";
    }
    case 13: {
      if (!specials) return "skipped special file";
      const f = r.next() < 0.5 ? ev : path.join(dir, "tests.jsonl");
      fs.rmSync(f, { force: true, recursive: true });
      const op = r.int(3);
      if (op === 0) fs.symlinkSync("/dev/zero", f);
      else if (op === 1) mkfifo(f);
      else fs.mkdirSync(f);
      return ["link to /dev/zero", "FIFO", "directory"][op] + " as " + path.basename(f);
    }
    case 14: {
      const f = path.join(dir, "tests.jsonl");
      if (fs.existsSync(f) && !regular(f)) return "tests.jsonl not a file";
      const recs = [];
      for (let k = 0; k < 1 + r.int(4); k++) {
        const rec = {
          scope: r.pick(["run", "decision", ...PROTO]),
          intervention: r.pick(["input:*", "untrusted", "msg:*->*", "*".repeat(40) + "a", ...PROTO]),
          target: r.pick(["tool=send_email", "tool=*", ...PROTO]),
        };
        rec[r.pick(["verdict", "ci", "n", "p_with", "effect", "group", "role", "scope", "intervention", "target", ...PROTO])] = hostileValue(r);
        recs.push(textOf(rec[RAW] ? rec : rec).replace('"\\u0000"', ""));
      }
      fs.appendFileSync(f, recs.map((x) => (x.length > 5_000_000 ? "{}" : x)).join("\n") + "\n");
      return "hostile tests.jsonl records";
    }
    default: {
      flipBytes(path.join(dir, "tests.jsonl"), r, 1 + r.int(6));
      return "flip bytes of tests.jsonl";
    }
  }
}
