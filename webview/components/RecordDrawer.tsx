/**
 * The full record of one event, in a drawer over the screen: what a model call saw and produced,
 * a tool call's arguments and result, an input's or message's content, where it came from and what
 * it led to, and its hash and previous hash. Escape closes it.
 */
import type { ComponentChildren } from "preact";
import { useEffect, useRef } from "preact/hooks";
import type { EventView, Investigation } from "../../core/analysis/types";
import { bytes, int, ms, typeLabel, when } from "../labels";
import { indexOf, nodeName } from "../logic";
import { useApp } from "./context";
import { Button, Chip, Flag, HostLink, Icon, KeyValues, TrustChip } from "./ui";

const REF = /^sha256:[0-9a-f]{64}$/;
const isRef = (x: unknown): x is string => typeof x === "string" && REF.test(x);
const str = (x: unknown): string => (typeof x === "string" ? x : x === null || x === undefined ? "" : JSON.stringify(x));
const site = (x: unknown): { file: string; line: number } | null => {
  const s = x as { file?: unknown; line?: unknown } | null;
  return s && typeof s === "object" && typeof s.file === "string" && typeof s.line === "number" ? { file: s.file, line: s.line } : null;
};

export function RecordDrawer() {
  const { ctl, state } = useApp();
  const inv = ctl.current();
  const seq = state.ui.record;
  const ev = inv && seq !== null ? indexOf(inv).eventsBySeq.get(seq) : undefined;
  const panel = useRef<HTMLElement>(null);
  const returnTo = useRef<HTMLElement | null>(null);
  const open = !!(inv && ev);

  useEffect(() => {
    if (!open) return;
    const onKey = (e: KeyboardEvent) => {
      if (e.key === "Escape") {
        e.preventDefault();
        ctl.openRecord(null);
      }
    };
    document.addEventListener("keydown", onKey);
    return () => document.removeEventListener("keydown", onKey);
  }, [open, ctl]);

  useEffect(() => {
    if (open) {
      if (!panel.current?.contains(document.activeElement)) returnTo.current = document.activeElement as HTMLElement | null;
      panel.current?.focus();
    } else if (returnTo.current) {
      returnTo.current.focus?.();
      returnTo.current = null;
    }
  }, [open, seq]);

  if (!inv || !ev) return null;
  return (
    <aside class="drawer" ref={panel} tabIndex={-1} role="dialog" aria-modal="false" aria-label={`Record of event ${ev.seq}`}>
      <header class="drawer-head">
        <span class={`type-badge t-${ev.type.replace(/[^a-z]/g, "-")}`}>{typeLabel(ev.type)}</span>
        <h2>{`#${ev.seq} \u00b7 ${ev.agent}`}</h2>
        <span class="topbar-spacer" />
        <Button
          small
          icon="chevron-up"
          label="Previous event"
          title="Previous event"
          disabled={!indexOf(inv).eventsBySeq.has(ev.seq - 1)}
          onClick={() => ctl.openRecord(ev.seq - 1)}
        />
        <Button
          small
          icon="chevron-down"
          label="Next event"
          title="Next event"
          disabled={!indexOf(inv).eventsBySeq.has(ev.seq + 1)}
          onClick={() => ctl.openRecord(ev.seq + 1)}
        />
        <Button small icon="close" label="Close record" title="Close (Escape)" onClick={() => ctl.openRecord(null)} />
      </header>
      <div class="drawer-body">
        <Record inv={inv} ev={ev} />
      </div>
    </aside>
  );
}

function Record({ inv, ev }: { inv: Investigation; ev: EventView }) {
  const { ctl, state } = useApp();
  const run = state.ui.run!;
  const f = ev.fields;
  const s = site(f.site);
  const row = inv.timeline.find((r) => r.seq === ev.seq);
  return (
    <div class="record">
      {row && row.flags.length > 0 && (
        <div class="chips">
          {row.flags.map((fl) => (
            <Flag key={fl} flag={fl} />
          ))}
        </div>
      )}
      {row && <p class="record-text">{row.text}</p>}
      <KeyValues
        rows={[
          ["Recorded", when(ev.ts)],
          [
            "Log line",
            <HostLink enabled={ctl.linksEnabled} icon="json" onClick={() => ctl.openEvent(run, ev.line)}>
              {`events.jsonl:${ev.line}`}
            </HostLink>,
          ],
          ...(s
            ? ([
                [
                  "Recorded at",
                  <HostLink enabled={ctl.linksEnabled} icon="go-to-file" onClick={() => ctl.openSite(run, s.file, s.line)}>
                    {`${s.file}:${s.line}`}
                  </HostLink>,
                ],
              ] as [string, ComponentChildren][])
            : []),
        ]}
      />
      <TypeBody inv={inv} ev={ev} />
      <Links inv={inv} title="Came from" ids={ev.from} empty="Nothing recorded feeds this event." />
      <Links inv={inv} title="Led to" ids={ev.to} empty="Nothing recorded follows from this event." />
      <h3>Integrity</h3>
      <KeyValues
        rows={[
          ["Hash", <code class="hash">{ev.hash}</code>],
          ["Previous hash", <code class="hash">{ev.prev_hash}</code>],
          ["Event id", <code class="hash">{ev.id}</code>],
        ]}
      />
      {ev.problems.length > 0 && (
        <ul class="problems">
          {ev.problems.map((p, i) => (
            <li key={i}>
              <Icon name="error" />
              {p}
            </li>
          ))}
        </ul>
      )}
      <details class="raw">
        <summary>All recorded fields</summary>
        <pre>{JSON.stringify(ev.fields, null, 2)}</pre>
      </details>
      {ctl.linksEnabled && (
        <div class="record-actions">
          <Button small icon="list-tree" onClick={() => ctl.revealInTree(run, ev.seq)}>
            Reveal in the Runs view
          </Button>
        </div>
      )}
    </div>
  );
}

function TypeBody({ inv, ev }: { inv: Investigation; ev: EventView }) {
  const f = ev.fields;
  switch (ev.type) {
    case "input":
      return (
        <>
          <KeyValues
            rows={[
              ["Source", str(f.source)],
              ["Trust", <TrustChip trust={str(f.trust)} />],
              ["Kind", str(f.kind)],
            ]}
          />
          <Blob inv={inv} title="Content" refStr={f.ref} />
        </>
      );
    case "decision":
      return <Decision inv={inv} ev={ev} />;
    case "action":
      return <Action inv={inv} ev={ev} />;
    case "message":
      return (
        <>
          <KeyValues
            rows={[
              ["From", ev.agent],
              ["To", str(f.to)],
              ["Channel", `${ev.agent} \u2192 ${str(f.to)}`],
              ["Trust", <TrustChip trust={str(f.trust)} />],
            ]}
          />
          <Blob inv={inv} title="Content" refStr={f.ref} />
        </>
      );
    default:
      return (
        <KeyValues
          rows={Object.entries(f)
            .filter(([k]) => k !== "site")
            .map(([k, v]) => [k, typeof v === "string" ? v : <pre class="inline-json">{JSON.stringify(v, null, 2)}</pre>])}
        />
      );
  }
}

function Decision({ inv, ev }: { inv: Investigation; ev: EventView }) {
  const f = ev.fields;
  const usage = (f.usage ?? {}) as { input_tokens?: unknown; output_tokens?: unknown; estimated?: unknown };
  const context = Array.isArray(f.context) ? (f.context as Record<string, unknown>[]) : [];
  const ablated = Array.isArray(f.ablated) ? f.ablated.filter(isRef) : [];
  return (
    <>
      <KeyValues
        rows={[
          ["Model", str(f.model)],
          ["Purpose", str(f.purpose) || "—"],
          ["Status", f.status === "ok" ? "ok" : <Chip tone="cause">{str(f.status)}</Chip>],
          ["Latency", ms(typeof f.duration_ms === "number" ? f.duration_ms : null) || "—"],
          [
            "Tokens",
            typeof usage.input_tokens === "number" && typeof usage.output_tokens === "number"
              ? `${int(usage.input_tokens)} in \u00b7 ${int(usage.output_tokens)} out${usage.estimated ? " (estimated)" : ""}`
              : "—",
          ],
          ["Seed", str(f.seed)],
        ]}
      />
      <h3>{`What it saw (${context.length} item${context.length === 1 ? "" : "s"})`}</h3>
      <ol class="context-items">
        {context.map((c, i) => (
          <li key={i}>
            <details>
              <summary>
                <span class="mono">{str(c.source) || str(c.kind)}</span>
                <span class="muted">{str(c.kind)}</span>
                <TrustChip trust={str(c.trust)} />
              </summary>
              <BlobText inv={inv} refStr={c.ref} />
            </details>
          </li>
        ))}
      </ol>
      {ablated.length > 0 && (
        <>
          <h3>Removed by the replay</h3>
          <ul class="plain">
            {ablated.map((r) => (
              <li key={r}>
                <code class="hash">{r}</code>
              </li>
            ))}
          </ul>
        </>
      )}
      <Blob inv={inv} title="What it produced" refStr={f.output} />
    </>
  );
}

function Action({ inv, ev }: { inv: Investigation; ev: EventView }) {
  const { ctl } = useApp();
  const f = ev.fields;
  const guard = f.guard as { verdict?: unknown; reason?: unknown } | undefined;
  const decision = typeof f.decision === "string" ? indexOf(inv).eventsByNode.get(`ev:${f.decision}`) : undefined;
  return (
    <>
      <KeyValues
        rows={[
          ["Tool", <span class="mono">{str(f.tool)}</span>],
          ["Mode", str(f.mode)],
          ["Status", f.status === "ok" ? "ok" : <Chip tone="cause">{str(f.status)}</Chip>],
          [
            "Sensitive",
            f.sensitive ? (
              <Chip tone="info" icon="shield">
                sensitive
              </Chip>
            ) : (
              "no"
            ),
          ],
          ["Latency", ms(typeof f.duration_ms === "number" ? f.duration_ms : null) || "—"],
          [
            "Asked for by",
            decision ? (
              <button type="button" class="linkbtn" onClick={() => ctl.openRecord(decision.seq)}>
                {`#${decision.seq} ${nodeName(inv, `ev:${decision.id}`)}`}
              </button>
            ) : (
              "no recorded model call"
            ),
          ],
          ...(guard && typeof guard === "object" ? ([["Guard", `${str(guard.verdict)}: ${str(guard.reason)}`]] as [string, ComponentChildren][]) : []),
        ]}
      />
      <Blob inv={inv} title="Arguments" refStr={f.args_ref} />
      <Blob inv={inv} title="Result" refStr={f.result_ref} />
    </>
  );
}

function Blob({ inv, title, refStr }: { inv: Investigation; title: string; refStr: unknown }) {
  return (
    <>
      <h3>{title}</h3>
      <BlobText inv={inv} refStr={refStr} />
    </>
  );
}

function BlobText({ inv, refStr }: { inv: Investigation; refStr: unknown }) {
  const { ctl, state } = useApp();
  if (!isRef(refStr)) return <p class="muted">No content recorded.</p>;
  const b = Object.prototype.hasOwnProperty.call(inv.blobs, refStr) ? inv.blobs[refStr] : undefined;
  return (
    <div class="blob">
      {b?.problem ? (
        <div class="blob-problem">
          <Icon name="warning" />
          {b.problem}
        </div>
      ) : b ? (
        <pre class="blob-text">{b.text}</pre>
      ) : (
        <p class="muted">Not included in this view.</p>
      )}
      <div class="blob-meta">
        <HostLink enabled={ctl.linksEnabled} icon="file-code" onClick={() => ctl.openBlob(state.ui.run!, refStr)} title="Open the stored value">
          <code class="hash">{refStr.slice(0, 19)}…</code>
        </HostLink>
        {b && <span class="muted">{bytes(b.bytes)}</span>}
        {b?.truncated && <span class="muted">preview cut; open the blob for all of it</span>}
      </div>
    </div>
  );
}

function Links({ inv, title, ids, empty }: { inv: Investigation; title: string; ids: string[]; empty: string }) {
  const { ctl } = useApp();
  const ix = indexOf(inv);
  return (
    <>
      <h3>{title}</h3>
      {ids.length === 0 ? (
        <p class="muted">{empty}</p>
      ) : (
        <ul class="links">
          {ids.map((id) => {
            const e = ix.eventsByNode.get(id);
            const n = ix.nodes.get(id);
            return (
              <li key={id}>
                <button type="button" class="linkbtn" disabled={!e} onClick={() => e && ctl.openRecord(e.seq)}>
                  <span class="muted mono">{e ? `#${e.seq}` : ""}</span>
                  <span>{nodeName(inv, id)}</span>
                </button>
                {n?.trust === "untrusted" && <TrustChip trust="untrusted" />}
              </li>
            );
          })}
        </ul>
      )}
    </>
  );
}
