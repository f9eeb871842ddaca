/**
 * The Graph screen's side pieces: finding a node by name, the legend, and the panel describing the
 * traced node.
 */
import { CausingSpanLink } from "./CauseDetails";
import { useMemo, useState } from "preact/hooks";
import type { Investigation, RunGraph } from "../../core/analysis/types";
import { effect, int, typeLabel, verdictLabel, verdictTone } from "../labels";
import { edgeVisible, indexOf, nodeName, nodesOf, trace } from "../logic";
import { useApp } from "./context";
import { Button, Chip, Icon, KeyValues, TrustChip } from "./ui";

export function NodeSearch({ rg }: { rg: RunGraph }) {
  const { ctl, state } = useApp();
  const [q, setQ] = useState("");
  const [miss, setMiss] = useState(false);
  // the names are listed on the first search, not with the first frame
  const names = useMemo((): { list: { id: string; text: string }[] | null } => ({ list: null }), [rg.graph]);
  const find = () => {
    const s = q.trim().toLowerCase();
    if (!s) return;
    names.list ??= rg.graph.nodes.map((n) => ({ id: n.id, text: `${nodeName(rg, n.id)} #${n.seq}`.toLowerCase() }));
    const hits = names.list.filter((n) => n.text.includes(s));
    setMiss(!hits.length);
    if (!hits.length) return;
    const at = hits.findIndex((h) => h.id === state.ui.graph.node);
    ctl.setGraph({ node: hits[(at + 1) % hits.length].id });
  };
  return (
    <label class={`search${miss ? " miss" : ""}`}>
      <Icon name="search" />
      <input
        type="search"
        placeholder="Find a node (Enter)"
        aria-label="Find a node by name or #seq; Enter selects the next match"
        value={q}
        onInput={(e) => {
          setQ(e.currentTarget.value);
          setMiss(false);
        }}
        onKeyDown={(e) => {
          if (e.key === "Enter") {
            e.preventDefault();
            find();
          }
        }}
      />
    </label>
  );
}

export function Legend({ grouped = false }: { grouped?: boolean }) {
  return (
    <div class="graph-legend" aria-hidden="true">
      {grouped && <span class="legend-note">Groups: agents (ellipses), message channels (diamonds), input sources (squares). Click a group to expand it.</span>}
      <span>
        <i class="lg lg-trusted" />
        trusted input
      </span>
      <span>
        <i class="lg lg-untrusted" />
        untrusted input
      </span>
      <span>
        <i class="lg lg-decision" />
        model call
      </span>
      <span>
        <i class="lg lg-action" />
        tool call
      </span>
      <span>
        <i class="lg lg-flagged" />
        flagged
      </span>
      <span>
        <i class="lg lg-message" />
        message
      </span>
      <span>
        <i class="lg-line lg-causal" />
        tested cause
      </span>
    </div>
  );
}

/** The traced node; `inv` is null while only the run's graph part is here (a big run's Graph screen). */
export function NodePanel({ rg, inv }: { rg: RunGraph; inv: Investigation | null }) {
  const { ctl, state } = useApp();
  const id = state.ui.graph.node;
  const n = id ? nodesOf(rg.graph).get(id) : undefined;
  const tr = useMemo(
    () =>
      id
        ? trace(
            rg.graph.edges.filter((e) => edgeVisible(e, state.ui.graph)),
            id,
          )
        : null,
    [rg, id, state.ui.graph],
  );
  if (!n || !tr) {
    return (
      <aside class="graph-panel">
        <p class="muted">Click a node to trace what it came from and what it led to.</p>
        <p class="muted">Red edges are tested causes, labelled with their effect. Reach alone is not cause.</p>
      </aside>
    );
  }
  // every node is an event; the full record opens by its seq (the drawer reads the rest of the run)
  const ev = inv ? indexOf(inv).eventsByNode.get(n.id) : n;
  const action = inv ? !!inv.actions[n.id] : n.type === "action";
  const tested = rg.graph.edges.filter((e) => e.evidence === "tested" && (e.src === n.id || e.dst === n.id));
  return (
    <aside class="graph-panel" aria-label="Selected node">
      <div class="graph-panel-head">
        <span class={`type-badge t-${n.type}`}>{typeLabel(n.type)}</span>
        <Button small icon="close" label="Clear the trace" title="Clear the trace (Escape)" onClick={() => ctl.setGraph({ node: null })} />
      </div>
      <h3 class="graph-panel-title">{n.label}</h3>
      <KeyValues
        rows={[
          ["Agent", n.agent],
          ["Event", `#${n.seq}`],
          ["Trust", n.trust ? <TrustChip trust={n.trust} /> : "—"],
          ["Upstream", `${int(tr.up.size)} node${tr.up.size === 1 ? "" : "s"}`],
          ["Downstream", `${int(tr.down.size)} node${tr.down.size === 1 ? "" : "s"}`],
        ]}
      />
      {tested.length > 0 && (
        <ul class="plain tested-list">
          {tested.map((e, i) => (
            <li key={i}>
              <Chip tone={verdictTone(e.verdict)}>{verdictLabel(e.verdict, e.role)}</Chip>
              <span class="mono">{effect(e.effect)}</span>
              <span class="mono muted">{e.src === n.id ? e.target : e.intervention}</span>
            </li>
          ))}
        </ul>
      )}
      <div class="graph-panel-actions">
        {ev && (
          <Button small icon="symbol-event" onClick={() => ctl.openRecord(ev.seq)}>
            Full record
          </Button>
        )}
        {inv && <CausingSpanLink inv={inv} node={n.id} />}
        {action && (
          <Button small icon="question" onClick={() => ctl.go("why", { action: n.id })}>
            Why did it happen?
          </Button>
        )}
      </div>
    </aside>
  );
}
