/**
 * Argument provenance for every tool call of a run at once. Each traced value (values.ts) is
 * looked for, case-insensitively, in the task, inputs and results of calls not blocked that came
 * before the call. All values of all calls are found in one pass over the run's content with an
 * Aho–Corasick automaton, so a run of 100,000 events costs one scan, not one per call.
 */
import { safeText } from "../log/sanitize";
import type { ActionEvent } from "../log/events";
import { nodeId } from "../graph/graph";
import type { RunModel } from "../graph/model";
import type { EvidenceRef, ProvenanceRow } from "./types";
import { searchText, tracedValues } from "./values";

interface Source {
  node: string;
  seq: number;
  line: number;
  label: string;
  trust: "trusted" | "untrusted";
  ref: string;
  text: string;
}

/** Multi-pattern substring search (Aho–Corasick) over lower-cased text. */
class Matcher {
  private next: Map<number, number>[] = [new Map()];
  private fail: number[] = [0];
  private out: number[][] = [[]];

  constructor(patterns: readonly string[]) {
    patterns.forEach((p, i) => {
      let s = 0;
      for (let k = 0; k < p.length; k++) {
        const c = p.charCodeAt(k);
        let t = this.next[s].get(c);
        if (t === undefined) {
          t = this.next.length;
          this.next.push(new Map());
          this.fail.push(0);
          this.out.push([]);
          this.next[s].set(c, t);
        }
        s = t;
      }
      this.out[s].push(i);
    });
    const queue: number[] = [];
    for (const t of this.next[0].values()) queue.push(t);
    for (let qi = 0; qi < queue.length; qi++) {
      const s = queue[qi];
      for (const [c, t] of this.next[s]) {
        queue.push(t);
        let f = this.fail[s];
        while (f !== 0 && !this.next[f].has(c)) f = this.fail[f];
        const ft = this.next[f].get(c);
        this.fail[t] = ft !== undefined && ft !== t ? ft : 0;
        if (this.out[this.fail[t]].length) this.out[t] = this.out[t].concat(this.out[this.fail[t]]);
      }
    }
  }

  /** Calls hit(patternIndex) once per pattern found in text. */
  scan(text: string, hit: (i: number) => void): void {
    let s = 0;
    const seen = new Set<number>();
    for (let k = 0; k < text.length; k++) {
      const c = text.charCodeAt(k);
      let t = this.next[s].get(c);
      while (t === undefined && s !== 0) {
        s = this.fail[s];
        t = this.next[s].get(c);
      }
      s = t ?? 0;
      const o = this.out[s];
      for (let j = 0; j < o.length; j++) {
        if (!seen.has(o[j])) {
          seen.add(o[j]);
          hit(o[j]);
        }
      }
    }
  }
}

export class ProvenanceIndex {
  private sources: Source[] = [];
  /** value (lower-cased) → indices of sources holding it, in seq order */
  private found = new Map<string, number[]>();
  private readonly hashed: boolean;
  private readonly atoms = new Map<string, { path: string; value: string }[]>();
  /** value → position in its `found` list of the first trusted source */
  private readonly firstTrusted = new Map<string, number>();

  constructor(private readonly m: RunModel) {
    // content hashed, or (imported traces) not captured everywhere: a value found nowhere may simply not have been recorded
    this.hashed = ["hashed", "partial", "none"].includes(safeText(m.start.meta?.content_capture));
    const untrustedRefs = new Set(m.inputs.filter((e) => e.trust === "untrusted").map((e) => e.ref));
    for (const e of m.events) {
      if (e.type === "input") {
        this.sources.push({
          node: nodeId(e.id),
          seq: e.seq,
          line: e.line,
          label: e.kind === "task" ? "task" : safeText(e.source ?? "input"),
          trust: e.trust === "untrusted" ? "untrusted" : "trusted",
          ref: safeText(e.ref ?? ""),
          text: searchText(m.value(e.ref)),
        });
      } else if (e.type === "action" && e.status !== "blocked") {
        const a = e as unknown as ActionEvent;
        // a result is untrusted when the same content was also recorded as untrusted input, or the
        // call itself was marked untrusted; a trusted tool's own output stays trusted
        const untrusted = untrustedRefs.has(a.result_ref ?? "") || e.trust === "untrusted" || e.untrusted === true;
        // an untrusted tool's result is also recorded as an input (`tool:<name>`) with the same
        // content: that input stands for it, so the source is named once
        if (untrustedRefs.has(a.result_ref ?? "")) continue;
        this.sources.push({
          node: nodeId(e.id),
          seq: e.seq,
          line: e.line,
          label: safeText(a.tool),
          trust: untrusted ? "untrusted" : "trusted",
          ref: safeText(a.result_ref ?? ""),
          text: searchText(m.value(a.result_ref)),
        });
      }
    }
    const needles = new Set<string>();
    for (const a of m.actions) {
      const vals = uniqueAtoms(m.value(a.args_ref));
      this.atoms.set(a.id, vals);
      for (const v of vals) needles.add(v.value.toLowerCase());
    }
    const list = [...needles];
    if (!list.length) return;
    const matcher = new Matcher(list);
    this.sources.forEach((src, si) => {
      matcher.scan(src.text, (i) => {
        const key = list[i];
        let at = this.found.get(key);
        if (!at) this.found.set(key, (at = []));
        if (src.trust === "trusted" && !this.firstTrusted.has(key)) this.firstTrusted.set(key, at.length);
        at.push(si);
      });
    });
  }

  /** Where each traced value of a call's arguments came from (at most `maxSources` sources listed each). */
  forAction(a: ActionEvent, maxSources = 20): ProvenanceRow[] {
    const vals = this.atoms.get(a.id) ?? uniqueAtoms(this.m.value(a.args_ref));
    return vals.map(({ path, value }) => {
      if (this.hashed && value.startsWith("sha256:")) return { value, path, status: "hashed" as const, sources: [], count: 0 };
      const list = this.found.get(value.toLowerCase()) ?? [];
      // sources are in seq order: the ones before the call are a prefix
      let lo = 0;
      let hi = list.length;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (this.sources[list[mid]].seq < a.seq) lo = mid + 1;
        else hi = mid;
      }
      const count = lo;
      const trustedBefore = (this.firstTrusted.get(value.toLowerCase()) ?? Infinity) < count;
      const sources: EvidenceRef[] = list.slice(0, Math.min(count, maxSources)).map((i) => {
        const s = this.sources[i];
        return { node: s.node, seq: s.seq, line: s.line, label: s.label, trust: s.trust, ref: s.ref };
      });
      const status = !count ? (this.hashed ? "hashed" : "generated") : trustedBefore ? "trusted" : "untrusted-only";
      return { value, path, status, sources, count };
    });
  }
}

/** Traced values of arguments, first occurrence of each. */
function uniqueAtoms(args: unknown): { path: string; value: string }[] {
  const seen = new Set<string>();
  return tracedValues(args).filter((v) => (seen.has(v.value) ? false : (seen.add(v.value), true)));
}
