/**
 * Agents: how the agents depend on each other — activity per agent, whether each channel's
 * messages are used by the receiver, tested influence per channel, the influence matrix (every
 * tested removal against every target) and the critical path.
 */
import type { ChannelRow, Investigation, TestSummary } from "../../core/analysis/types";
import { effect, int, interval, ms, rates, verdictLabel, verdictTone } from "../labels";
import { indexOf, nodeName } from "../logic";
import { useApp } from "./context";
import { Chip, Empty, Icon, Section } from "./ui";

export function AgentsScreen() {
  const { ctl } = useApp();
  const inv = ctl.current()!;
  return (
    <div class="stack">
      <AgentTable inv={inv} />
      <Channels inv={inv} />
      <MatrixView inv={inv} />
      <CriticalPath inv={inv} />
    </div>
  );
}

function AgentTable({ inv }: { inv: Investigation }) {
  return (
    <Section title="Agents" icon="organization">
      {inv.agents.length === 0 ? (
        <Empty>No agents joined this run.</Empty>
      ) : (
        <table class="table">
          <thead>
            <tr>
              <th>Agent</th>
              <th>Role</th>
              <th>Spawned by</th>
              <th class="num">Inputs</th>
              <th class="num">Model calls</th>
              <th class="num">Tool calls</th>
              <th class="num">Sent</th>
              <th class="num">Received</th>
              <th class="num">Tokens</th>
              <th class="num">Model time</th>
            </tr>
          </thead>
          <tbody>
            {inv.agents.map((a) => (
              <tr key={a.agent}>
                <td class="cell-title">{a.agent}</td>
                <td>{a.role || <span class="muted">—</span>}</td>
                <td>{a.parent ?? <span class="muted">—</span>}</td>
                <td class="num">{int(a.inputs)}</td>
                <td class="num">{int(a.decisions)}</td>
                <td class="num">{int(a.actions)}</td>
                <td class="num">{int(a.sent)}</td>
                <td class="num">{int(a.received)}</td>
                <td class="num">{int(a.tokens)}</td>
                <td class="num mono">{ms(a.model_ms) || "—"}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </Section>
  );
}

function usage(c: ChannelRow) {
  if (c.sent === 0) return <span class="muted">nothing sent</span>;
  if (c.used === 0)
    return (
      <Chip tone="unsure" icon="eye-closed" title="No later model call of the receiver had these messages in its context">
        never used
      </Chip>
    );
  if (c.used < c.sent) return <Chip tone="info">{`${c.used} of ${c.sent} used`}</Chip>;
  return (
    <Chip tone="clear" icon="eye">
      {c.sent === 1 ? "used" : `all ${c.sent} used`}
    </Chip>
  );
}

function TestCell({ t }: { t: TestSummary }) {
  return (
    <span class="test-cell">
      <Chip tone={verdictTone(t.verdict)}>{verdictLabel(t.verdict, t.role)}</Chip>
      <span class="mono">{`${effect(t.effect)} ${interval(t.ci)}`}</span>
      <span class="muted mono">{t.target}</span>
    </span>
  );
}

function Channels({ inv }: { inv: Investigation }) {
  const { ctl } = useApp();
  const ix = indexOf(inv);
  return (
    <Section title="Channels between agents" icon="comment-discussion" note="is each channel used by its receiver, and does cutting it change the outcome?">
      {inv.channels.length === 0 ? (
        <Empty>The agents sent no messages to each other.</Empty>
      ) : (
        <table class="table">
          <thead>
            <tr>
              <th>Channel</th>
              <th class="num">Messages</th>
              <th>Used by the receiver</th>
              <th>Tested influence</th>
            </tr>
          </thead>
          <tbody>
            {inv.channels.map((c) => (
              <tr key={c.channel}>
                <td class="nowrap cell-title">{`${c.from} \u2192 ${c.to}`}</td>
                <td class="num">{int(c.sent)}</td>
                <td>{usage(c)}</td>
                <td>{c.tests.length === 0 ? <span class="muted">not tested</span> : c.tests.map((t, i) => <TestCell key={i} t={t} />)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {inv.unusedMessages.length > 0 && (
        <div class="unused">
          <span class="muted">Messages no later model call of the receiver saw:</span>
          {inv.unusedMessages.map((m) => {
            const e = ix.eventsByNode.get(m.node);
            return (
              <button type="button" class="srcchip" key={m.node} onClick={() => e && ctl.openRecord(e.seq)}>
                {`#${m.seq} ${m.from} \u2192 ${m.to}`}
              </button>
            );
          })}
        </div>
      )}
    </Section>
  );
}

function MatrixView({ inv }: { inv: Investigation }) {
  const m = inv.matrix;
  return (
    <Section title="Influence matrix" icon="table" note="every tested removal against every target">
      {m.rows.length === 0 ? (
        <Empty icon="beaker">No tests yet. Run one from the Why screen to fill the matrix.</Empty>
      ) : (
        <div class="scroll-x">
          <table class="table matrix">
            <thead>
              <tr>
                <th>Removed</th>
                {m.cols.map((c) => (
                  <th key={c} class="mono matrix-col">
                    {c}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {m.rows.map((r) => (
                <tr key={r}>
                  <th class="mono matrix-row" scope="row">
                    {r}
                  </th>
                  {m.cols.map((c) => {
                    const t = Object.prototype.hasOwnProperty.call(m.cells, `${r}||${c}`) ? m.cells[`${r}||${c}`] : undefined;
                    return (
                      <td
                        key={c}
                        class={`matrix-cell${t ? ` tone-${verdictTone(t.verdict)}` : ""}`}
                        title={t ? `${verdictLabel(t.verdict, t.role)} · ${rates(t.p_with, t.p_without)} · n = ${t.n}` : "not tested"}
                      >
                        {t ? (
                          <>
                            <span class="matrix-effect">{effect(t.effect)}</span>
                            <span class="matrix-verdict">{verdictLabel(t.verdict, t.role)}</span>
                          </>
                        ) : (
                          <span class="muted">·</span>
                        )}
                      </td>
                    );
                  })}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </Section>
  );
}

function CriticalPath({ inv }: { inv: Investigation }) {
  const { ctl } = useApp();
  const ix = indexOf(inv);
  return (
    <Section title="Critical path" icon="git-commit" note="the longest observed chain that ends in a tool call">
      {inv.criticalPath.length === 0 ? (
        <Empty>No recorded dependencies.</Empty>
      ) : (
        <ol class="lineage-path critical">
          {inv.criticalPath.map((id, i) => {
            const e = ix.eventsByNode.get(id);
            const n = ix.nodes.get(id);
            return (
              <li key={id}>
                {i > 0 && <Icon name="arrow-small-right" />}
                <button type="button" class={`step${n?.trust === "untrusted" ? " untrusted" : ""}`} onClick={() => e && ctl.openRecord(e.seq)}>
                  <span class="muted">{n ? n.agent : ""}</span>
                  <span>{nodeName(inv, id).replace(/^.* \u00b7 /, "")}</span>
                </button>
              </li>
            );
          })}
        </ol>
      )}
    </Section>
  );
}
