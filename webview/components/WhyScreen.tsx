/**
 * Why did it happen? For any tool call: where each argument came from, one sentence of verdict,
 * the recorded path through the agents with every untrusted root, and the candidate causes with
 * Run test and Find the cause.
 */
import { useMemo, useState } from "preact/hooks";
import type { ActionView, Investigation } from "../../core/analysis/types";
import { PROVENANCE_LABEL, PROVENANCE_TONE, clip } from "../labels";
import { isUntrusted } from "../../core/graph/lineage";
import { actionSeverity, defaultAction, indexOf, lineageGroups, nodeLineage, nodeName } from "../logic";
import { Candidates } from "./Candidates";
import { ForeignTests } from "./ForeignTests";
import { RecordedChain } from "./RecordedChain";
import { NotTested } from "./NotTested";
import { CauseDetails } from "./CauseDetails";
import { useApp } from "./context";
import { Button, Chip, Empty, HostLink, Icon, Section, SeverityChip, TrustChip, onActivate, useRoving } from "./ui";

export function WhyScreen() {
  const { ctl, state } = useApp();
  const inv = ctl.current()!;
  const actions = indexOf(inv).actions;
  const node = state.ui.action && inv.actions[state.ui.action] ? state.ui.action : defaultAction(inv);
  if (!node) return <Empty icon="tools">This run made no tool calls, so there is nothing to explain yet.</Empty>;
  const a = inv.actions[node];
  return (
    <div class="why">
      <ActionList actions={actions} selected={node} />
      <div class="why-main stack">
        <ActionHeader inv={inv} a={a} />
        <div
          class={`verdict${a.candidates.some((c) => ["primary", "contributing", "confirmed", "joint"].includes(c.status)) ? " verdict-cause" : ""}`}
          role="note"
        >
          <Icon name="lightbulb" />
          <span>{a.verdict}</span>
        </div>
        <Provenance inv={inv} a={a} />
        <Lineage inv={inv} a={a} />
        <Candidates inv={inv} a={a} />
        <NotTested a={a} />
        <RecordedChain a={a} />
        <ForeignTests a={a} />
        <CauseDetails inv={inv} a={a} />
      </div>
    </div>
  );
}

function ActionList({ actions, selected }: { actions: ActionView[]; selected: string }) {
  const { ctl } = useApp();
  const nav = useRoving<HTMLUListElement>(actions.length);
  return (
    <nav class="why-list" aria-label="Tool calls">
      <div class="why-list-head">Tool calls</div>
      <ul ref={nav.ref} onKeyDown={nav.onKeyDown} role="listbox" aria-label="Tool calls">
        {actions.map((a, i) => {
          const sev = actionSeverity(a);
          const pick = () => ctl.go("why", { action: a.node });
          return (
            <li
              key={a.node}
              role="option"
              aria-selected={a.node === selected}
              class={`why-item${a.node === selected ? " selected" : ""}${sev ? ` sev-${sev}` : ""}`}
              onClick={pick}
              onKeyDown={onActivate(pick)}
              {...nav.item(i)}
            >
              <span class="why-item-seq">{`#${a.seq}`}</span>
              <span class="why-item-tool">{a.tool}</span>
              <span class="why-item-agent">{a.agent}</span>
              {sev && <Icon name={sev === "high" ? "error" : "warning"} label={sev === "high" ? "high alert" : "needs review"} />}
            </li>
          );
        })}
      </ul>
    </nav>
  );
}

function ActionHeader({ inv, a }: { inv: Investigation; a: ActionView }) {
  const { ctl, state } = useApp();
  const run = state.ui.run!;
  return (
    <div class="action-head">
      <div class="action-title">
        <h1>
          <span class="mono">{a.tool}</span>
        </h1>
        <span class="muted">{`by ${a.agent} \u00b7 event #${a.seq}`}</span>
        <span class="chips">
          {a.alerts.length > 0 && <SeverityChip severity={actionSeverity(a)!} />}
          {a.sensitive && (
            <Chip tone="info" icon="shield" title={a.sensitive === "declared" ? "Declared sensitive by the System" : "Sensitive by its name"}>
              {`sensitive (${a.sensitive})`}
            </Chip>
          )}
          {a.blocked && (
            <Chip tone="cause" icon="circle-slash">
              blocked by the guard
            </Chip>
          )}
          {a.status !== "ok" && !a.blocked && <Chip tone="cause">{a.status}</Chip>}
          {a.mode !== "live" && <Chip tone="none">{a.mode}</Chip>}
        </span>
      </div>
      <pre class="args" aria-label="Arguments">
        {clip(a.args, 600)}
      </pre>
      <div class="action-links">
        <Button small icon="symbol-event" onClick={() => ctl.openRecord(a.seq)}>
          Full record
        </Button>
        <Button
          small
          icon="type-hierarchy-sub"
          onClick={() => {
            ctl.setGraph({ node: a.node });
            ctl.go("graph");
          }}
        >
          Show in graph
        </Button>
        {a.decision && (
          <Button
            small
            icon="hubot"
            onClick={() => {
              const e = indexOf(inv).eventsByNode.get(a.decision!);
              if (e) ctl.openRecord(e.seq);
            }}
          >
            The model call that asked for it
          </Button>
        )}
        {a.site && (
          <HostLink enabled={ctl.linksEnabled} icon="go-to-file" onClick={() => ctl.openSite(run, a.site!.file, a.site!.line)}>
            {`${a.site.file}:${a.site.line}`}
          </HostLink>
        )}
        <HostLink enabled={ctl.linksEnabled} icon="json" onClick={() => ctl.openEvent(run, a.line)}>
          {`events.jsonl:${a.line}`}
        </HostLink>
      </div>
    </div>
  );
}

function Provenance({ a }: { inv: Investigation; a: ActionView }) {
  const { ctl } = useApp();
  return (
    <Section title="Where each argument came from" icon="references">
      {a.provenance.length === 0 ? (
        <Empty>No argument values to trace (the call had no string or number arguments).</Empty>
      ) : (
        <table class="table provenance">
          <colgroup>
            <col class="col-arg" />
            <col class="col-value" />
            <col class="col-from" />
            <col class="col-sources" />
          </colgroup>
          <thead>
            <tr>
              <th>Argument</th>
              <th>Value</th>
              <th>Came from</th>
              <th>Sources</th>
            </tr>
          </thead>
          <tbody>
            {a.provenance.map((p, i) => (
              <tr key={i} class={p.status === "untrusted-only" ? "row-alert" : undefined}>
                <td class="mono arg-path">{p.path}</td>
                <td>
                  <code class="value">{clip(p.value, 160)}</code>
                </td>
                <td>
                  <Chip tone={PROVENANCE_TONE[p.status]}>{PROVENANCE_LABEL[p.status]}</Chip>
                </td>
                <td class="chips sources">
                  {p.sources.length === 0 ? (
                    <span class="muted">{p.status === "generated" ? "written by the model" : "—"}</span>
                  ) : (
                    <>
                      {p.sources.map((src) => (
                        <button type="button" key={src.node} class="srcchip" onClick={() => ctl.openRecord(src.seq)} title={`Open event #${src.seq}`}>
                          <span>{src.label}</span>
                          <TrustChip trust={src.trust} />
                        </button>
                      ))}
                      {p.count > p.sources.length && <span class="muted">{`and ${p.count - p.sources.length} more`}</span>}
                    </>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </Section>
  );
}

const TYPE_ICON: Record<string, string> = { input: "file", decision: "hubot", action: "tools", message: "mail" };

function Lineage({ inv, a }: { inv: Investigation; a: ActionView }) {
  const { ctl } = useApp();
  const ix = indexOf(inv);
  const groups = useMemo(() => lineageGroups(nodeLineage(inv, a.node)), [inv, a.node]);
  // lineage falls back to every input when no untrusted one reached the call: the labels say which
  const untrusted = groups.some((g) => g.roots.some((r) => isUntrusted(ix.nodes.get(r))));
  const [all, setAll] = useState(false);
  const shown = all ? groups : groups.slice(0, PATHS);
  const step = (id: string, root = false) => {
    const n = ix.nodes.get(id);
    const ev = ix.eventsByNode.get(id);
    return (
      <button
        type="button"
        class={`step${root ? " root" : ""}${isUntrusted(n) ? " untrusted" : ""}${id === a.node ? " target" : ""}`}
        onClick={() => ev && ctl.openRecord(ev.seq)}
        title={ev ? `Open event #${ev.seq}` : undefined}
        key={id}
      >
        <Icon name={TYPE_ICON[n?.type ?? ""] ?? "circle-filled"} />
        <span>{nodeName(inv, id)}</span>
        {root && <TrustChip trust={n?.trust} />}
      </button>
    );
  };
  return (
    <Section
      title="How it got here"
      icon="git-commit"
      note={
        !groups.length ? undefined : untrusted ? "recorded path from every untrusted root" : "no untrusted input reached it: recorded path from every input"
      }
    >
      {groups.length === 0 ? (
        <Empty icon="pass">No untrusted content reached this call on a recorded path.</Empty>
      ) : (
        shown.map((g, i) => (
          <div class="lineage" key={i}>
            <div class="lineage-roots">
              <span class="lineage-label">
                {untrusted
                  ? g.roots.length === 1
                    ? "Untrusted root"
                    : `${g.roots.length} untrusted roots`
                  : g.roots.length === 1
                    ? "Input"
                    : `${g.roots.length} inputs`}
              </span>
              {(all ? g.roots : g.roots.slice(0, ROOTS)).map((r) => step(r, true))}
              {!all && g.roots.length > ROOTS && <span class="muted">{`and ${g.roots.length - ROOTS} more`}</span>}
            </div>
            <ol class="lineage-path">
              {g.path.map((id) => (
                <li key={id}>
                  <Icon name="arrow-small-right" />
                  {step(id)}
                </li>
              ))}
            </ol>
          </div>
        ))
      )}
      {groups.length > PATHS || groups.some((g) => g.roots.length > ROOTS) ? (
        <div class="more">
          <Button small icon={all ? "chevron-up" : "chevron-down"} onClick={() => setAll(!all)}>
            {all ? "Show fewer" : `Show every path (${groups.length}) and root`}
          </Button>
        </div>
      ) : null}
    </Section>
  );
}

/** Paths and roots shown before "Show every path" (long runs can have hundreds). */
const PATHS = 6;
const ROOTS = 12;
