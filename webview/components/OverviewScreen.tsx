/**
 * Overview: what happened (the run in figures and its tool calls in order, the flagged one marked)
 * and what needs attention (the alerts, most severe first; the top one names its value, its only
 * source and, once tested, the confirmed cause).
 */
import type { Alert, Investigation } from "../../core/analysis/types";
import { CANDIDATE_LABEL, effect, int, interval, ms, plural } from "../labels";
import { actionSeverity, indexOf, sortedAlerts } from "../logic";
import { useApp } from "./context";
import { Stat } from "./RunsScreen";
import { Button, Chip, Empty, HostLink, Icon, Section, SeverityChip, TrustChip } from "./ui";

export function OverviewScreen() {
  const { ctl } = useApp();
  const inv = ctl.current()!;
  const s = inv.summary;
  return (
    <div class="stack">
      <div class="run-head">
        <h1>{s.run_id}</h1>
        <div class="run-meta">
          <span>{s.program}</span>
          {s.task && <span class="run-task">{s.task}</span>}
          {s.writer !== undefined && <span class="run-writer">{`written by ${s.writer ?? "an unrecorded writer"}`}</span>}
        </div>
      </div>
      <div class="stats">
        <Stat label="Agents" value={int(s.agents.length)} sub={s.agents.join(", ")} />
        <Stat label="Events" value={int(s.events)} />
        <Stat label="Model calls" value={int(s.decisions)} sub={ms(s.model_ms)} />
        <Stat label="Tool calls" value={int(s.actions)} sub={s.blocked ? `${s.blocked} blocked` : ms(s.tool_ms)} />
        <Stat label="Messages" value={int(s.messages)} />
        <Stat label="Untrusted inputs" value={`${int(s.untrusted_inputs)} / ${int(s.inputs)}`} />
        <Stat
          label="Tokens"
          value={int(s.usage.input_tokens + s.usage.output_tokens)}
          sub={`${int(s.usage.input_tokens)} in \u00b7 ${int(s.usage.output_tokens)} out`}
        />
        <Stat
          label="Tests"
          value={int(s.tests)}
          sub={`${s.tests ? `${int(s.confirmed_causes)} confirmed` : "none yet"}${s.foreign_tests ? ` \u00b7 ${int(s.foreign_tests)} by others, not counted` : ""}`}
        />
      </div>
      {inv.problems.length > 0 && <Problems inv={inv} />}
      <ToolCalls inv={inv} />
      <Alerts inv={inv} />
    </div>
  );
}

function ToolCalls({ inv }: { inv: Investigation }) {
  const { ctl } = useApp();
  const actions = indexOf(inv).actions;
  return (
    <Section title="What happened: tool calls in order" icon="tools">
      {actions.length === 0 ? (
        <Empty>This run made no tool calls.</Empty>
      ) : (
        <ol class="toolflow">
          {actions.map((a, i) => {
            const sev = actionSeverity(a);
            return (
              <li key={a.node} class="toolflow-item">
                {i > 0 && <Icon name="arrow-small-right" />}
                <button
                  type="button"
                  class={`toolcall${sev ? ` sev-${sev}` : ""}${a.blocked ? " blocked" : ""}`}
                  onClick={() => ctl.go("why", { action: a.node })}
                  title={`Why did ${a.tool} happen?`}
                >
                  <span class="toolcall-seq">{`#${a.seq}`}</span>
                  <span class="toolcall-tool">{a.tool}</span>
                  <span class="toolcall-agent">{a.agent}</span>
                  {sev === "high" && <Icon name="error" label="high alert" />}
                  {sev === "review" && <Icon name="warning" label="needs review" />}
                  {a.blocked && <Icon name="circle-slash" label="blocked" />}
                  {a.status === "error" && <Icon name="bug" label="error" />}
                </button>
              </li>
            );
          })}
        </ol>
      )}
    </Section>
  );
}

function Alerts({ inv }: { inv: Investigation }) {
  const alerts = sortedAlerts(inv.alerts);
  return (
    <Section title="What needs attention" icon="warning" note={alerts.length ? plural(alerts.length, "alert") : undefined}>
      {alerts.length === 0 ? (
        <Empty icon="pass">No alerts: no sensitive tool call was reached by untrusted content, and the log verifies.</Empty>
      ) : (
        <ul class="alerts">
          {alerts.map((a, i) => (
            <AlertCard key={i} alert={a} top={i === 0} />
          ))}
        </ul>
      )}
    </Section>
  );
}

export function AlertCard({ alert: a, top }: { alert: Alert; top: boolean }) {
  const { ctl, state } = useApp();
  const run = state.ui.run!;
  const only = a.rule === "untrusted-value" && a.evidence?.length === 1;
  const action = a.node && ctl.current()?.actions[a.node];
  return (
    <li class={`alert sev-${a.severity}${top ? " top" : ""}`}>
      <div class="alert-head">
        <SeverityChip severity={a.severity} />
        <span class="alert-title">{a.title}</span>
        {a.seq !== null && <span class="muted nowrap">{`event #${a.seq}`}</span>}
      </div>
      <div class="alert-detail">{a.detail}</div>
      {(a.value || a.evidence?.length) && (
        <dl class="alert-facts">
          {a.value && (
            <div>
              <dt>Value</dt>
              <dd>
                <code class="value">{a.value}</code>
              </dd>
            </div>
          )}
          {a.evidence && a.evidence.length > 0 && (
            <div>
              <dt>
                {only
                  ? "Only source"
                  : a.evidence.length === 1
                    ? "Source"
                    : a.reached && a.reached > a.evidence.length
                      ? `Sources (first ${a.evidence.length} of ${int(a.reached)})`
                      : "Sources"}
              </dt>
              <dd class="chips">
                {a.evidence.map((ev) => (
                  <button type="button" key={ev.node} class="srcchip" onClick={() => ctl.openRecord(ev.seq)} title={`Open event #${ev.seq}`}>
                    <span>{ev.label}</span>
                    <TrustChip trust={ev.trust} />
                  </button>
                ))}
              </dd>
            </div>
          )}
          {a.cause !== undefined && a.target && (
            <div>
              <dt>Cause</dt>
              <dd>
                {a.cause ? (
                  <span class="cause-line">
                    <Chip tone="cause" icon="beaker">
                      {a.cause.role && a.cause.role in CANDIDATE_LABEL ? CANDIDATE_LABEL[a.cause.role as keyof typeof CANDIDATE_LABEL] : "Confirmed cause"}
                    </Chip>
                    <code>{a.cause.intervention}</code>
                    <span class="mono">{`${effect(a.cause.effect)} ${interval(a.cause.ci)}`}</span>
                    <span class="muted">{`n = ${a.cause.n}`}</span>
                  </span>
                ) : (
                  <span class="muted">Not tested yet: reach is not cause.</span>
                )}
              </dd>
            </div>
          )}
        </dl>
      )}
      <div class="alert-actions">
        {action && (
          <Button small primary={top} icon="question" onClick={() => ctl.go("why", { action: a.node })}>
            Why did it happen?
          </Button>
        )}
        {a.seq !== null && (
          <Button small icon="symbol-event" onClick={() => ctl.openRecord(a.seq)}>
            Full record
          </Button>
        )}
        {a.site && (
          <HostLink
            enabled={ctl.linksEnabled}
            icon="go-to-file"
            onClick={() => ctl.openSite(run, a.site!.file, a.site!.line)}
            title="Open the line that recorded it"
          >
            {`${a.site.file}:${a.site.line}`}
          </HostLink>
        )}
      </div>
    </li>
  );
}

function Problems({ inv }: { inv: Investigation }) {
  const { ctl, state } = useApp();
  const run = state.ui.run!;
  return (
    <Section title="Log integrity" icon="unverified" note={plural(inv.problems.length, "problem")}>
      <table class="table">
        <thead>
          <tr>
            <th>Severity</th>
            <th>Problem</th>
            <th>Where</th>
            <th>Detail</th>
          </tr>
        </thead>
        <tbody>
          {inv.problems.map((p, i) => (
            <tr key={i}>
              <td>
                <Chip tone={p.severity === "error" ? "cause" : "unsure"}>{p.severity}</Chip>
              </td>
              <td class="mono">{p.code}</td>
              <td class="nowrap">
                {p.line ? (
                  <HostLink enabled={ctl.linksEnabled && (p.file ?? "events.jsonl") === "events.jsonl"} onClick={() => ctl.openEvent(run, p.line!)}>
                    {`${p.file ?? "events.jsonl"}:${p.line}`}
                  </HostLink>
                ) : (
                  (p.file ?? "run")
                )}
              </td>
              <td>{p.message}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </Section>
  );
}
