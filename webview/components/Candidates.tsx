/**
 * Candidate causes of one tool call (every upstream input and message channel) with their status,
 * effect, interval, with → without rates and wording reuse; Run test on one candidate and Find the
 * cause for the whole action, with live progress, Cancel and the outcome.
 */
import { useState } from "preact/hooks";
import type { ActionView, Candidate, Investigation } from "../../core/analysis/types";
import { interval, rates, verdictLabel, verdictTone, effect, CANDIDATE_LABEL } from "../labels";
import { jobOutcome } from "../logic";
import type { Job } from "../state";
import { useApp } from "./context";
import { Chain, HowTested } from "./HowTested";
import { Button, Chip, EffectBar, Empty, Icon, Meter, Progress, Section, StatusChip, TrustChip } from "./ui";

export function Candidates({ a }: { inv: Investigation; a: ActionView }) {
  const { ctl, state } = useApp();
  const run = state.ui.run!;
  const caps = state.caps;
  const active = ctl.activeJob(run);
  const jobs = Object.values(state.jobs).filter((j) => j.run === run && j.action === a.node);
  const busy = !!active;
  const [all, setAll] = useState(false);
  const rows = all ? a.candidates : a.candidates.slice(0, MAX_ROWS);
  const disabledWhy = !caps.canReplay
    ? (caps.replayReason ?? "Replays are not available here.")
    : busy
      ? "A replay of this run is already running."
      : undefined;
  return (
    <Section
      title="Candidate causes"
      icon="beaker"
      note="every upstream input and message channel"
      actions={
        <Button
          primary
          icon="search"
          disabled={!caps.canReplay || busy}
          title={disabledWhy ?? "Replay without each suspect and name the cause"}
          onClick={() => ctl.findCause(run, a.node, a.target)}
        >
          Find the cause
        </Button>
      }
    >
      {!caps.canReplay && (
        <div class="note" role="note">
          <Icon name="info" />
          <span>{caps.replayReason ?? "Replays are not available here."}</span>
        </div>
      )}
      {jobs
        .filter((j) => j.kind !== "fixCheck")
        .map((j) => (
          <JobPanel key={j.id} job={j} />
        ))}
      {a.candidates.length === 0 ? (
        <Empty>No upstream inputs or messages: nothing recorded fed this call.</Empty>
      ) : (
        <div class="table-scroll">
          <table class="table candidates">
            <thead>
              <tr>
                <th>Candidate</th>
                <th>Status</th>
                <th class="num">Effect</th>
                <th class="num">95% interval</th>
                <th class="num">With → without</th>
                <th class="num">n</th>
                <th>Wording reused</th>
                <th>
                  <span class="sr-only">Test</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {rows.map((c) => (
                <CandidateRow key={c.intervention} c={c} a={a} disabled={!caps.canReplay || busy} disabledWhy={disabledWhy} />
              ))}
            </tbody>
          </table>
        </div>
      )}
      {a.candidates.length > MAX_ROWS && (
        <div class="more">
          <Button small icon={all ? "chevron-up" : "chevron-down"} onClick={() => setAll(!all)}>
            {all ? "Show fewer" : `Show all ${a.candidates.length} candidates`}
          </Button>
        </div>
      )}
      {a.candidatesTotal !== undefined && a.candidatesTotal > a.candidates.length && (
        <p class="note candidates-left-off" role="note">
          {`${a.candidatesTotal - a.candidates.length} more untested upstream inputs and channels are not listed (${a.candidatesTotal} in all). Find the cause picks its suspects from the run, not from this list.`}
        </p>
      )}
      <p class="footnote">
        Effect: how much less often the call happens when the candidate is removed, over paired replays, with its 95% interval. Ruled out: any effect is below
        0.20. Inconclusive: more replays are needed to decide.
      </p>
    </Section>
  );
}

/** Candidates listed before "Show all" (tested and untrusted ones come first in the analysis). */
const MAX_ROWS = 40;

function CandidateRow({ c, a, disabled, disabledWhy }: { c: Candidate; a: ActionView; disabled: boolean; disabledWhy?: string }) {
  const { ctl, state } = useApp();
  const t = c.test;
  const run = state.ui.run!;
  return (
    <tr class={`cand status-${c.status}`}>
      <td>
        <div class="cand-name">
          <Icon name={c.kind === "message" ? "mail" : c.kind === "input" ? "file" : "circle-filled"} />
          <span class="cell-title">{c.label}</span>
          <TrustChip trust={c.trust} />
        </div>
        <div class="cell-sub mono">{c.intervention}</div>
      </td>
      <td>
        <StatusChip status={c.status} />
        {/* the writer is named when it is not this machine ("local"): a test pulled from a collector */}
        {t?.by && t.by !== "local" && <div class="cell-sub muted" title="who wrote this test (tests.jsonl)">{`by ${t.by}`}</div>}
        {t?.group && (
          <div class="cell-sub group-test" title={`A group test removed these ${t.group.length} suspects together: ${t.group.join(", ")}`}>
            {`group test of ${t.group.length}: ${verdictLabel(t.verdict, t.role).toLowerCase()}`}
          </div>
        )}
        <HowTested how={t ?? undefined} />
      </td>
      <td class="num">
        <EffectBar value={t?.effect} ci={t?.ci} />
      </td>
      <td class="num mono nowrap">{t ? interval(t.ci) : "—"}</td>
      <td class="num mono nowrap">{t ? rates(t.p_with, t.p_without) : "—"}</td>
      <td class="num" title={t?.group ? "replays of the group test" : undefined}>
        {t ? (t.group ? `${t.n} (group)` : t.n) : "—"}
      </td>
      <td>
        <Reused c={c} />
      </td>
      <td class="nowrap">
        <Button
          small
          icon="beaker"
          disabled={disabled}
          title={disabledWhy ?? `Replay without ${c.intervention}`}
          onClick={() => ctl.runTest(run, a.node, a.target, c.intervention)}
        >
          {t ? "Re-test" : "Run test"}
        </Button>
      </td>
    </tr>
  );
}

/**
 * How much of the item reappears: its wording in the next model output (word 5-grams), or the
 * call's specific values copied from it verbatim, whichever is more; the copied values are named.
 */
function Reused({ c }: { c: Candidate }) {
  const copied = c.copied?.values ?? [];
  const share = c.copied?.share ?? 0;
  const value = Math.max(c.reuse, share);
  const label =
    share > c.reuse
      ? `Share of the call's specific values (addresses, ids, file names) copied verbatim from this item; its wording reused: ${Math.round(c.reuse * 100)}%`
      : "Share of its wording the next model output reused";
  return (
    <div class="reused">
      <Meter value={value} label={label} />
      {copied.length > 0 && (
        <div class="cell-sub mono copied" title={`Copied verbatim into the call: ${copied.join(", ")}`}>{`copied: ${copied.join(", ")}`}</div>
      )}
    </div>
  );
}

export function JobPanel({ job }: { job: Job }) {
  const { ctl } = useApp();
  const what = job.kind === "test" ? `Testing ${job.intervention}` : job.kind === "fixCheck" ? `Checking the fix ${job.intervention}` : "Finding the cause";
  const running = job.state === "running" || job.state === "cancelling";
  return (
    <div class={`job job-${job.state}`} role="status" aria-live="polite">
      <div class="job-head">
        <Icon name={running ? "loading" : job.state === "done" ? "pass" : job.state === "cancelled" ? "circle-slash" : "error"} spin={running} />
        <span class="job-title">{what}</span>
        <span class="mono muted job-target">{job.target}</span>
        <span class="topbar-spacer" />
        {running ? (
          <Button small icon="debug-stop" disabled={job.state === "cancelling"} onClick={() => ctl.cancel(job.id)}>
            {job.state === "cancelling" ? "Cancelling…" : "Cancel"}
          </Button>
        ) : (
          <Button small icon="close" label="Dismiss" title="Dismiss" onClick={() => ctl.dismissJob(job.id)} />
        )}
      </div>
      {running && (
        <>
          <Progress done={job.done} total={job.total} label={what} />
          <div class="job-phase muted">
            {job.phase}
            {job.total > 0 ? ` \u00b7 ${job.done} / ${job.total}` : ""}
            {job.message ? ` \u00b7 ${job.message}` : ""}
          </div>
        </>
      )}
      {job.state === "failed" && <div class="job-error">{job.error}</div>}
      {job.state === "cancelled" && <div class="muted">Cancelled. Nothing was saved.</div>}
      {job.state === "done" && <Outcome job={job} />}
    </div>
  );
}

function Outcome({ job }: { job: Job }) {
  const o = jobOutcome(job.kind, job.result);
  if (o.kind === "test") {
    return (
      <div class="outcome">
        <Chip tone={verdictTone(o.verdict)}>{verdictLabel(o.verdict, o.role)}</Chip>
        <span class="mono">{`${effect(o.effect)} ${interval(o.ci)}`}</span>
        <span class="mono">{rates(o.pWith, o.pWithout)}</span>
        {o.n !== undefined && <span class="muted">{`n = ${o.n}`}</span>}
        <span class="muted">Saved to tests.jsonl; the table updates with it.</span>
        <HowTested how={o.how} />
      </div>
    );
  }
  return (
    <div class="outcome outcome-attr">
      {o.summary && <div>{o.summary}</div>}
      {o.chain && o.chain.length > 0 && <Chain chain={o.chain} />}
      {o.causes && o.causes.length > 0 && (
        <ul class="outcome-causes">
          {o.causes.map((c) => (
            <li key={c.spec}>
              <Chip tone="cause">{c.role in CANDIDATE_LABEL ? CANDIDATE_LABEL[c.role as keyof typeof CANDIDATE_LABEL] : c.role || "cause"}</Chip>
              <code>{c.spec}</code>
              <span class="mono">{`${effect(c.effect)} ${interval(c.ci)}`}</span>
            </li>
          ))}
        </ul>
      )}
      {o.ruledOut && o.ruledOut.length > 0 && <div class="muted">{`Ruled out: ${o.ruledOut.join(", ")}`}</div>}
      {o.inconclusive && o.inconclusive.length > 0 && <div class="muted">{`Inconclusive: ${o.inconclusive.join(", ")}`}</div>}
      {o.notTested && o.notTested.length > 0 && (
        <div class="muted outcome-not-tested">{`Not tested (neither a cause nor ruled out): ${o.notTested.map((x) => `${x.spec}: ${x.reason}`).join("; ")}`}</div>
      )}
      {o.modelCalls !== undefined && <div class="muted">{`${o.modelCalls} model calls`}</div>}
    </div>
  );
}
