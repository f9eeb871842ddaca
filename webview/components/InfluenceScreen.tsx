/**
 * Influence across runs: sources against tools (in how many runs each source reached each tool),
 * confirmed causes and ruled-out links, and content ranked by its strongest tested effect.
 */
import type { Influence, InfluenceEdge, InfluenceSource } from "../../core/analysis/types";
import { clip, effect, int } from "../labels";
import { rankedSources, sourceName } from "../logic";
import { useApp } from "./context";
import { Chip, Empty, Section, TrustChip } from "./ui";

export function InfluenceScreen() {
  const { state } = useApp();
  const inf = state.workspace?.influence;
  if (!inf) return <Empty icon="loading">Reading the runs…</Empty>;
  if (!inf.sources.length) return <Empty icon="references">No content was used by a model call in these runs yet.</Empty>;
  const ranked = rankedSources(inf);
  return (
    <div class="stack">
      <Section
        title="Sources and the tools they reached"
        icon="references"
        note={`across ${state.workspace!.runs.length} run${state.workspace!.runs.length === 1 ? "" : "s"}`}
      >
        <Diagram inf={inf} sources={ranked} />
        <div class="legend">
          <span>
            <span class="swatch reach" /> reached (thicker: in more runs)
          </span>
          <span>
            <span class="swatch confirmed" /> confirmed cause, labelled with its effect
          </span>
          <span>
            <span class="swatch ruled" /> tested and ruled out
          </span>
        </div>
      </Section>
      <Reach inf={inf} sources={ranked} />
      <Ranking sources={ranked} />
    </div>
  );
}

const ROW = 34;

function Diagram({ inf, sources }: { inf: Influence; sources: InfluenceSource[] }) {
  const tools = inf.outcomes;
  const rows = Math.max(sources.length, tools.length);
  const height = rows * ROW + 24;
  const W = 960;
  const xL = 300;
  const xR = W - 220;
  const yS = (i: number) => 12 + (rows - sources.length) * ROW * 0.5 + i * ROW + ROW / 2;
  const yT = (i: number) => 12 + (rows - tools.length) * ROW * 0.5 + i * ROW + ROW / 2;
  const si = new Map(sources.map((s, i) => [s.id, i]));
  const ti = new Map(tools.map((t, i) => [t.id, i]));
  const maxRuns = Math.max(1, ...inf.edges.map((e) => e.reach_runs));
  const order = [...inf.edges].sort((a, b) => rank(a) - rank(b));
  return (
    <svg
      class="influence-diagram"
      viewBox={`0 0 ${W} ${height}`}
      role="img"
      aria-label="Sources on the left, tools on the right; lines show which source reached which tool"
    >
      {order.map((e) => {
        const a = si.get(e.source);
        const b = ti.get(e.tool);
        if (a === undefined || b === undefined) return null;
        const y1 = yS(a);
        const y2 = yT(b);
        const mx = (xL + xR) / 2;
        const cls = e.confirmed ? "link confirmed" : e.ruled_out ? "link ruled" : "link reach";
        return (
          <g key={`${e.source}|${e.tool}`}>
            <path
              class={cls}
              d={`M${xL + 8},${y1} C${mx},${y1} ${mx},${y2} ${xR - 8},${y2}`}
              style={{ strokeWidth: e.confirmed ? 3 : 1 + (5 * e.reach_runs) / maxRuns }}
            >
              <title>{`${e.reach_runs} run${e.reach_runs === 1 ? "" : "s"}${e.confirmed ? `, confirmed ${effect(e.max_effect)}` : e.ruled_out ? ", ruled out" : ""}`}</title>
            </path>
            {e.confirmed && (
              <text class="link-label" x={mx} y={(y1 + y2) / 2 - 6} text-anchor="middle">
                {effect(e.max_effect)}
              </text>
            )}
          </g>
        );
      })}
      {sources.map((s, i) => (
        <g key={s.id} class={`node src${s.trust === "untrusted" ? " untrusted" : ""}`}>
          <circle cx={xL} cy={yS(i)} r={6} />
          <text x={xL - 14} y={yS(i) + 4} text-anchor="end">
            {clip(sourceName(s), 38)}
          </text>
        </g>
      ))}
      {tools.map((t, i) => (
        <g key={t.id} class="node tool">
          <rect x={xR - 6} y={yT(i) - 6} width={12} height={12} rx={2} />
          <text x={xR + 14} y={yT(i) + 4}>
            {clip(t.id, 26)}
          </text>
          <text class="sub" x={W - 8} y={yT(i) + 4} text-anchor="end">
            {`${t.runs} run${t.runs === 1 ? "" : "s"}`}
          </text>
        </g>
      ))}
    </svg>
  );
}

/** Drawing order: plain reach first, then ruled out, confirmed on top. */
function rank(e: InfluenceEdge): number {
  return e.confirmed ? 2 : e.ruled_out ? 1 : 0;
}

function Reach({ inf, sources }: { inf: Influence; sources: InfluenceSource[] }) {
  const edges = new Map(inf.edges.map((e) => [`${e.source}\u0000${e.tool}`, e]));
  return (
    <Section title="Reach and tests" icon="table" note="runs in which each source reached each tool">
      <div class="scroll-x">
        <table class="table matrix reach-table">
          <thead>
            <tr>
              <th>Source</th>
              {inf.outcomes.map((o) => (
                <th key={o.id} class="mono matrix-col">
                  {o.id}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {sources.map((s) => (
              <tr key={s.id}>
                <th scope="row" class="matrix-row">
                  <span class="cell-title">{sourceName(s)}</span>
                </th>
                {inf.outcomes.map((o) => {
                  const e = edges.get(`${s.id}\u0000${o.id}`);
                  if (!e)
                    return (
                      <td key={o.id} class="matrix-cell">
                        <span class="muted">·</span>
                      </td>
                    );
                  const tests = e.tests.map((t) => `${t.run}: ${effect(t.effect)} (${t.verdict}, n = ${t.n})`).join("\n");
                  return (
                    <td key={o.id} class={`matrix-cell${e.confirmed ? " tone-cause" : e.ruled_out ? " tone-clear" : ""}`} title={tests || "not tested"}>
                      <span class="matrix-effect">{`${e.reach_runs} run${e.reach_runs === 1 ? "" : "s"}`}</span>
                      <span class="matrix-verdict">
                        {e.confirmed ? `cause ${effect(e.max_effect)}` : e.ruled_out ? "ruled out" : e.tests.length ? "tested" : "not tested"}
                      </span>
                    </td>
                  );
                })}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </Section>
  );
}

function Ranking({ sources }: { sources: InfluenceSource[] }) {
  return (
    <Section title="Content ranked by its strongest tested effect" icon="list-ordered">
      <table class="table">
        <thead>
          <tr>
            <th class="num">#</th>
            <th>Source</th>
            <th>Trust</th>
            <th class="num">Runs</th>
            <th class="num">Cited by</th>
            <th class="num">Strongest effect</th>
            <th>Confirmed cause of</th>
            <th>Content</th>
          </tr>
        </thead>
        <tbody>
          {sources.map((s, i) => (
            <tr key={s.id}>
              <td class="num muted">{i + 1}</td>
              <td>
                <div class="cell-title">{sourceName(s)}</div>
                <div class="cell-sub mono">{s.id.slice(0, 19)}…</div>
              </td>
              <td>{s.trust ? <TrustChip trust={s.trust} /> : <span class="muted">mixed</span>}</td>
              <td class="num">{int(s.runs)}</td>
              <td class="num" title="Model calls that had it in their context">
                {int(s.cited_by)}
              </td>
              <td class="num mono">{s.max_effect === null ? <span class="muted">not tested</span> : effect(s.max_effect)}</td>
              <td class="chips">
                {s.confirmed_tools.length ? (
                  s.confirmed_tools.map((t) => (
                    <Chip key={t} tone="cause">
                      {t}
                    </Chip>
                  ))
                ) : (
                  <span class="muted">—</span>
                )}
              </td>
              <td class="preview">{clip(s.preview, 160)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </Section>
  );
}
