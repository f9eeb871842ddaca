#!/usr/bin/env python3
"""An independent check of a run under the reference's rules, written with Python's json module:
seq is the line position, each prev_hash links, each event hash recomputes as
sha256(json.dumps(event without "hash", sort_keys=True, separators=(",", ":"), ensure_ascii=False)),
each blob re-hashes to its name, and every ref an event names exists. Also checks that every line
and every blob file is byte-for-byte what json.dumps(..., sort_keys=True, ensure_ascii=False) writes.

usage: verify_run.py RUN_DIR   → prints {"ok": bool, "events": n, "blobs": n, "problems": [...]}
"""
import hashlib
import json
import os
import sys


def canonical(x):
    return json.dumps(x, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def main(run):
    problems = []
    prev = "0" * 64
    events = []
    with open(os.path.join(run, "events.jsonl"), encoding="utf-8") as f:
        for i, line in enumerate(f):
            line = line.rstrip("\n")
            ev = json.loads(line)
            events.append(ev)
            if json.dumps(ev, sort_keys=True, ensure_ascii=False) != line:
                problems.append(f"line {i + 1}: not written as json.dumps writes it")
            if ev.get("seq") != i:
                problems.append(f"line {i + 1}: seq {ev.get('seq')}")
            if ev.get("prev_hash") != prev:
                problems.append(f"line {i + 1}: prev_hash does not link")
            body = {k: v for k, v in ev.items() if k != "hash"}
            if hashlib.sha256(canonical(body)).hexdigest() != ev.get("hash"):
                problems.append(f"line {i + 1}: hash mismatch")
            prev = ev.get("hash", "")
    blobs = {}
    bdir = os.path.join(run, "blobs")
    for name in sorted(os.listdir(bdir)):
        with open(os.path.join(bdir, name), encoding="utf-8") as f:
            text = f.read()
        val = json.loads(text)
        if json.dumps(val, sort_keys=True, ensure_ascii=False) != text:
            problems.append(f"blob {name[:12]}: not written as json.dumps writes it")
        if hashlib.sha256(canonical(val)).hexdigest() + ".json" != name:
            problems.append(f"blob {name[:12]}: content does not match its hash")
        blobs["sha256:" + name[:-5]] = val
    for ev in events:
        refs = [ev[k] for k in ("ref", "output", "args_ref", "result_ref") if ev.get(k)]
        refs += [c["ref"] for c in ev.get("context", [])]
        for r in refs:
            if r not in blobs:
                problems.append(f"seq {ev['seq']}: missing blob {r[:20]}")
    print(json.dumps({"ok": not problems, "events": len(events), "blobs": len(blobs), "problems": problems}))


if __name__ == "__main__":
    main(sys.argv[1])
