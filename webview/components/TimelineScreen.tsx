/**
 * Timeline: every event in order with its time offset, agent, latency, tokens and flags, filtered
 * by agent, type or text. A row opens the full record.
 */
import { useMemo, useState } from "preact/hooks";
import type { TimelineRow } from "../../core/analysis/types";
import { int, ms, offset, typeLabel } from "../labels";
import { filterTimeline, timelineFacets } from "../logic";
import type { ComponentChildren } from "preact";
import { useApp } from "./context";
import { CausingSpanLink } from "./CauseDetails";
import { Button, Empty, Flag, Icon, onActivate, useRoving } from "./ui";

/** Rows rendered at once; more on request (a long run stays responsive). */
export const PAGE = 400;

export function TimelineScreen() {
  const { ctl, state } = useApp();
  const inv = ctl.current()!;
  const f = state.ui.filters;
  const facets = useMemo(() => timelineFacets(inv.timeline), [inv]);
  const rows = useMemo(() => filterTimeline(inv.timeline, f), [inv, f]);
  const [limit, setLimit] = useState(PAGE);
  const shown = rows.slice(0, limit);
  const nav = useRoving<HTMLTableSectionElement>(shown.length);
  const filtered = f.agent || f.type || f.text || f.flagged;
  const spanNodes = useMemo(() => new Set(Object.values(inv.actions).flatMap((a) => (a.causes?.spans ?? []).map((s) => s.node))), [inv]);
  return (
    <div class="stack">
      <div class="filters" role="search">
        <label>
          <span>Agent</span>
          <select value={f.agent} onChange={(e) => ctl.setFilters({ agent: e.currentTarget.value })}>
            <option value="">All agents</option>
            {facets.agents.map((a) => (
              <option key={a} value={a}>
                {a}
              </option>
            ))}
          </select>
        </label>
        <label>
          <span>Type</span>
          <select value={f.type} onChange={(e) => ctl.setFilters({ type: e.currentTarget.value })}>
            <option value="">All types</option>
            {facets.types.map((t) => (
              <option key={t} value={t}>
                {typeLabel(t)}
              </option>
            ))}
          </select>
        </label>
        <label class="search">
          <Icon name="search" />
          <input
            type="search"
            placeholder="Filter by text, agent or #seq"
            value={f.text}
            onInput={(e) => ctl.setFilters({ text: e.currentTarget.value })}
            aria-label="Filter by text"
          />
        </label>
        <label class="check">
          <input type="checkbox" checked={f.flagged} onChange={(e) => ctl.setFilters({ flagged: e.currentTarget.checked })} />
          <span>Flagged only</span>
        </label>
        <span class="topbar-spacer" />
        <span class="muted" aria-live="polite">
          {filtered ? `${int(rows.length)} of ${int(inv.timeline.length)} events` : `${int(inv.timeline.length)} events`}
        </span>
        {filtered && (
          <Button small icon="clear-all" onClick={() => ctl.setFilters({ agent: "", type: "", text: "", flagged: false })}>
            Clear
          </Button>
        )}
      </div>
      {rows.length === 0 ? (
        <Empty icon="filter">No event matches these filters.</Empty>
      ) : (
        <table class="table timeline">
          <thead>
            <tr>
              <th class="num col-seq">#</th>
              <th class="num col-time">Time</th>
              <th class="col-agent">Agent</th>
              <th class="col-type">Type</th>
              <th>Event</th>
              <th class="num col-lat">Latency</th>
              <th class="num col-tok">Tokens</th>
              <th class="col-flags">Flags</th>
            </tr>
          </thead>
          <tbody ref={nav.ref} onKeyDown={nav.onKeyDown}>
            {shown.map((r, i) => (
              <Row
                key={r.seq}
                r={r}
                open={r.seq === state.ui.record}
                nav={nav.item(i)}
                onOpen={() => ctl.openRecord(r.seq)}
                span={spanNodes.has(r.node ?? "") ? <CausingSpanLink inv={inv} node={r.node} /> : null}
              />
            ))}
          </tbody>
        </table>
      )}
      {rows.length > shown.length && (
        <div class="more">
          <Button icon="chevron-down" onClick={() => setLimit(limit + PAGE)}>
            {`Show ${int(Math.min(PAGE, rows.length - shown.length))} more (${int(rows.length - shown.length)} not shown)`}
          </Button>
        </div>
      )}
    </div>
  );
}

const FLAG_ORDER = ["alert", "blocked", "error", "untrusted", "sensitive", "stub"];

/** Flags, most important first (a narrow column shows the first ones). */
export function orderFlags(flags: readonly string[]): string[] {
  const rank = (f: string) => (FLAG_ORDER.indexOf(f) + FLAG_ORDER.length + 1) % (FLAG_ORDER.length + 1);
  return [...flags].sort((a, b) => rank(a) - rank(b));
}

function Row({ r, open, nav, onOpen, span }: { r: TimelineRow; open: boolean; nav: Record<string, unknown>; onOpen: () => void; span?: ComponentChildren }) {
  const tokens = r.usage ? r.usage.input_tokens + r.usage.output_tokens : null;
  return (
    <tr
      class={`row-link type-${r.type.replace(/[^a-z]/g, "-")}${open ? " current" : ""}${r.flags.includes("alert") ? " row-alert" : ""}`}
      onClick={onOpen}
      onKeyDown={onActivate(onOpen)}
      aria-label={`Event ${r.seq}: open the full record`}
      {...nav}
    >
      <td class="num muted">{r.seq}</td>
      <td class="num mono nowrap">{offset(r.t_ms)}</td>
      <td title={r.agent}>{r.agent}</td>
      <td class="nowrap">
        <span class={`type-badge t-${r.type.replace(/[^a-z]/g, "-")}`}>{typeLabel(r.type)}</span>
      </td>
      <td class="event-text" title={r.text}>
        {r.text}
      </td>
      <td class="num mono nowrap">{ms(r.duration_ms)}</td>
      <td
        class="num mono nowrap"
        title={r.usage ? `${r.usage.input_tokens} in, ${r.usage.output_tokens} out${r.usage.estimated ? " (estimated)" : ""}` : undefined}
      >
        {tokens === null ? "" : `${int(tokens)}${r.usage?.estimated ? "~" : ""}`}
      </td>
      <td class="chips" title={r.flags.join(", ") || undefined}>
        {span}
        {orderFlags(r.flags).map((fl) => (
          <Flag key={fl} flag={fl} />
        ))}
      </td>
    </tr>
  );
}
