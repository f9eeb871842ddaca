/**
 * Runs: every recorded run with its alert counts, tests and log integrity. A row opens the run.
 */
import type { RunSummary } from "../../core/analysis/types";
import { int, plural, when } from "../labels";
import { useApp } from "./context";
import { Chip, Empty, Section, SeverityChip, onActivate, useRoving } from "./ui";

export function RunsScreen() {
  const { ctl, state } = useApp();
  const entries = ctl.entries();
  const nav = useRoving<HTMLTableSectionElement>(entries.length);
  if (!state.workspace && !entries.length) return <Empty icon="loading">Looking for runs…</Empty>;
  if (!entries.length) return <Empty icon="folder-opened">No runs yet. Record one with the SDK or run the demo (causeway demo).</Empty>;
  const totals = entries.reduce(
    (t, e) => ({ high: t.high + e.summary.alerts.high, tests: t.tests + e.summary.tests, failed: t.failed + (e.summary.integrity === "ok" ? 0 : 1) }),
    { high: 0, tests: 0, failed: 0 },
  );
  return (
    <div class="stack">
      <div class="stats">
        <Stat label="Runs" value={int(entries.length)} />
        <Stat label="High alerts" value={int(totals.high)} tone={totals.high ? "cause" : undefined} />
        <Stat label="Tests" value={int(totals.tests)} />
        <Stat label="Failing verification" value={int(totals.failed)} tone={totals.failed ? "cause" : undefined} />
      </div>
      <Section title="Runs" icon="list-unordered" note="Open a run to see what happened and why.">
        <table class="table runs-table">
          <thead>
            <tr>
              <th>Run</th>
              <th>Started</th>
              <th class="num">Agents</th>
              <th class="num">Events</th>
              <th>Tool calls</th>
              <th>Alerts</th>
              <th>Tests</th>
              <th>Log</th>
            </tr>
          </thead>
          <tbody ref={nav.ref} onKeyDown={nav.onKeyDown}>
            {entries.map((e, i) => {
              const open = () => ctl.go("overview", { run: e.key });
              return (
                <tr
                  key={e.key}
                  class={`row-link${e.key === state.ui.run ? " current" : ""}`}
                  onClick={open}
                  onKeyDown={onActivate(open)}
                  aria-label={`Open run ${e.summary.run_id}`}
                  {...nav.item(i)}
                >
                  <td>
                    <div class="cell-title">{e.summary.run_id}</div>
                    <div class="cell-sub one-line" title={e.summary.task ?? e.summary.program}>
                      {e.summary.task ?? e.summary.program}
                    </div>
                  </td>
                  <td class="nowrap">{when(e.summary.started)}</td>
                  <td class="num">{int(e.summary.agents.length)}</td>
                  <td class="num">{int(e.summary.events)}</td>
                  <td>
                    <ToolsCell s={e.summary} />
                  </td>
                  <td>
                    <AlertsCell s={e.summary} />
                  </td>
                  <td class="nowrap">
                    {e.summary.tests ? (
                      <span>
                        {plural(e.summary.tests, "test")}
                        {e.summary.confirmed_causes > 0 && (
                          <>
                            {" \u00b7 "}
                            <Chip tone="cause">{plural(e.summary.confirmed_causes, "cause")}</Chip>
                          </>
                        )}
                      </span>
                    ) : (
                      <span class="muted">none</span>
                    )}
                  </td>
                  <td>
                    <IntegrityChip s={e.summary} />
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </Section>
    </div>
  );
}

export function Stat({ label, value, tone, sub }: { label: string; value: string; tone?: "cause" | "clear"; sub?: string }) {
  return (
    <div class={`stat${tone ? ` tone-${tone}` : ""}`}>
      <div class="stat-value">{value}</div>
      <div class="stat-label">{label}</div>
      {sub && <div class="stat-sub">{sub}</div>}
    </div>
  );
}

function ToolsCell({ s }: { s: RunSummary }) {
  if (!s.tools_run.length) return <span class="muted">none</span>;
  const shown = s.tools_run.slice(0, 6);
  return (
    <span class="tool-seq">
      {shown.map((t, i) => (
        <span key={i} class="tool-name">
          {t}
        </span>
      ))}
      {s.tools_run.length > shown.length && <span class="muted">{`+${s.tools_run.length - shown.length}`}</span>}
    </span>
  );
}

function AlertsCell({ s }: { s: RunSummary }) {
  const parts = (["high", "review", "info"] as const).filter((k) => s.alerts[k] > 0);
  if (!parts.length) return <span class="muted">none</span>;
  return (
    <span class="chips nowrap-chips">
      {parts.map((k) => (
        <SeverityChip key={k} severity={k} count={s.alerts[k]} />
      ))}
    </span>
  );
}

export function IntegrityChip({ s }: { s: RunSummary }) {
  if (s.status === "running")
    return (
      <Chip tone="info" icon="pulse">
        recording
      </Chip>
    );
  if (s.integrity === "ok")
    return (
      <Chip tone="clear" icon="verified">
        intact
      </Chip>
    );
  return (
    <Chip tone="cause" icon="unverified" title={s.first_problem?.message}>
      {`failed \u00b7 ${plural(s.problems, "problem")}`}
    </Chip>
  );
}
