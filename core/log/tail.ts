/**
 * An incremental tail of a run that is still being written: each poll reads only the bytes
 * appended since the last one and parses them with the same checks as a full read. A file that
 * shrank or was replaced is re-read from the start.
 */
import fs from "node:fs";
import path from "node:path";
import type { LoadedEvent } from "./events";
import { EventLogParser } from "./reader";
import { openRunFile, readLimits } from "./safefs";

export interface TailUpdate {
  /** Events completed since the last poll. */
  events: LoadedEvent[];
  /** The file was replaced or truncated: everything was read again. */
  reset: boolean;
  /** Bytes read by this poll. */
  bytesRead: number;
}

export class RunTail {
  parser = new EventLogParser();
  private pos = 0;
  private ino = -1;
  readonly file: string;

  constructor(readonly dir: string) {
    this.file = path.join(dir, "events.jsonl");
  }

  get events(): LoadedEvent[] {
    return this.parser.events;
  }

  /** Reads what was appended since the last call (synchronously; small by construction). */
  poll(): TailUpdate {
    // a regular file only, never a FIFO or a link out of the run (see safefs.ts)
    const o = openRunFile(this.file, this.dir);
    if (!o.ok) return { events: [], reset: false, bytesRead: 0 };
    const before = this.parser.events.length;
    let reset = false;
    let read = 0;
    try {
      const st = { ino: o.ino, size: o.size };
      if (st.ino !== this.ino && this.ino !== -1) reset = true;
      if (st.size < this.pos) reset = true;
      if (reset) {
        this.parser = new EventLogParser();
        this.pos = 0;
      }
      this.ino = st.ino;
      if (st.size === this.pos) return { events: [], reset, bytesRead: 0 };
      const max = readLimits().maxEventsBytes;
      const chunk = Buffer.allocUnsafe(Math.min(1 << 20, Math.max(4096, st.size - this.pos)));
      for (;;) {
        if (this.pos >= max) break;
        const n = fs.readSync(o.fd, chunk, 0, Math.min(chunk.length, max - this.pos), this.pos);
        if (n <= 0) break;
        this.pos += n;
        read += n;
        this.parser.push(chunk.subarray(0, n));
      }
    } finally {
      fs.closeSync(o.fd);
    }
    return { events: this.parser.events.slice(before), reset, bytesRead: read };
  }

  /** Bytes consumed so far. */
  get position(): number {
    return this.pos;
  }
}
