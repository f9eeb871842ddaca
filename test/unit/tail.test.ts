import { describe, it, expect } from "vitest";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { RunTail } from "../../core/log/tail";

const SRC = path.resolve(__dirname, "../fixtures/causeway-py-demo/demo-seed0/events.jsonl");

describe("the incremental tail of a run being written", () => {
  it("reads only what was appended, waits for a line's end, and restarts when the file is replaced", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cw-tail-"));
    const file = path.join(dir, "events.jsonl");
    const bytes = fs.readFileSync(SRC);
    const lines = bytes
      .toString("utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => l + "\n");
    const tail = new RunTail(dir);
    expect(tail.poll().events).toEqual([]); // no file yet
    fs.writeFileSync(file, lines.slice(0, 5).join(""));
    let u = tail.poll();
    expect(u.events.map((e) => e.seq)).toEqual([0, 1, 2, 3, 4]);
    // half a line: nothing new until its newline arrives, and no problem reported meanwhile
    const half = lines[5].length >> 1;
    fs.appendFileSync(file, lines[5].slice(0, half));
    u = tail.poll();
    expect(u.events).toEqual([]);
    expect(tail.parser.problems).toEqual([]);
    fs.appendFileSync(file, lines[5].slice(half) + lines[6]);
    u = tail.poll();
    expect(u.events.map((e) => e.seq)).toEqual([5, 6]);
    expect(u.bytesRead).toBe(Buffer.byteLength(lines[5].slice(half) + lines[6]));
    expect(tail.position).toBe(Buffer.byteLength(lines.slice(0, 7).join("")));
    // the whole file replaced by a shorter one: read again from the start
    fs.writeFileSync(file, lines.slice(0, 3).join(""));
    u = tail.poll();
    expect(u.reset).toBe(true);
    expect(tail.events.map((e) => e.seq)).toEqual([0, 1, 2]);
    expect(tail.parser.problems).toEqual([]);
  });
});
