/**
 * After Find the cause: the causing span highlighted inside the input's full content (with its
 * effect and interval, and links to the input in the timeline and the graph), how two causes
 * combine (failure shape), Check a fix (replay with the span redacted, or the guard in block mode)
 * with its verdict, and Export case….
 */
import type { ActionView, FixView, Investigation, ShapeView, SpanView } from "../../core/analysis/types";
import { effect, interval, rates } from "../labels";
import { JobPanel } from "./Candidates";
import { useApp } from "./context";
import { Button, Chip, Empty, Icon, Section } from "./ui";

const pct = (x: number) => `${Math.round(x * 100)}%`;

export function CauseDetails({ a }: { inv: Investigation; a: ActionView }) {
  const { ctl, state } = useApp();
  const run = state.ui.run!;
  const d = a.causes;
  const confirmed = a.candidates.some((c) => ["primary", "contributing", "confirmed", "joint"].includes(c.status));
  const fixJobs = Object.values(state.jobs).filter((j) => j.run === run && j.action === a.node && j.kind === "fixCheck");
  if (!d && !confirmed && !fixJobs.length) return null;
  const busy = !!ctl.activeJob(run);
  const canReplay = state.caps.canReplay;
  const fixes: { label: string; fix: string[]; title: string }[] = [];
  for (const s of d?.spans ?? []) fixes.push({ label: "Check a fix: redact the span", fix: [s.spec], title: `Replay with ${s.spec}` });
  fixes.push({
    label: "Check a fix: guard in block mode",
    fix: ["guard:block"],
    title: "Replay with the guard blocking sensitive calls that use untrusted-only values",
  });
  return (
    <Section
      title="From cause to fix"
      icon="debug-breakpoint-function"
      id="cause-to-fix"
      actions={
        <Button
          icon="export"
          disabled={!ctl.linksEnabled}
          title={ctl.linksEnabled ? "Save this action's case file (markdown, every figure linked to the log)" : "Export case is available in VS Code"}
          onClick={() => ctl.exportCase(run, a.target)}
        >
          Export case…
        </Button>
      }
    >
      {d?.spans.length
        ? d.spans.map((s) => <SpanBlock key={s.spec} s={s} />)
        : confirmed && <Empty icon="search">The cause is not narrowed to a span yet: Find the cause narrows it (setting causeway.findCause.spans).</Empty>}
      {d?.shapes.map((s) => (
        <ShapeTable key={s.causes.join("|")} s={s} />
      ))}
      {confirmed && (
        <div class="fix-actions">
          {fixes.map((f) => (
            <Button
              key={f.fix.join("+")}
              icon="wrench"
              disabled={!canReplay || busy}
              title={canReplay ? f.title : state.caps.replayReason}
              onClick={() => ctl.checkFix(run, a.node, a.target, f.fix)}
            >
              {f.label}
            </Button>
          ))}
        </div>
      )}
      {fixJobs.map((j) => (
        <JobPanel key={j.id} job={j} />
      ))}
      {d?.fixes.length ? <FixTable fixes={d.fixes} /> : null}
    </Section>
  );
}

/** The input's content with the causing span(s) marked. */
function SpanBlock({ s }: { s: SpanView }) {
  const { ctl } = useApp();
  const chars = Array.from(s.text);
  const parts: { text: string; mark: boolean }[] = [];
  let pos = 0;
  for (const [a, b] of s.ranges) {
    if (a > pos) parts.push({ text: chars.slice(pos, a).join(""), mark: false });
    parts.push({ text: chars.slice(a, b).join(""), mark: true });
    pos = Math.max(pos, b);
  }
  if (pos < chars.length) parts.push({ text: chars.slice(pos).join(""), mark: false });
  return (
    <div class="causing-span" data-spec={s.spec}>
      <div class="causing-span-head">
        <Icon name="quote" />
        <span class="cell-title">{`Causing span of ${s.source}`}</span>
        <Chip tone="cause">{`${s.level}${s.joint ? ", parts each enough alone" : ""}`}</Chip>
        <span class="mono">{`${effect(s.effect)} ${interval(s.ci)}`}</span>
        <span class="muted">{`n = ${s.n}`}</span>
        {s.whole && <span class="muted">{`whole input ${effect(s.whole.effect)} ${interval(s.whole.ci)}`}</span>}
      </div>
      <pre class="span-text" aria-label={`Content of ${s.source} with the causing span marked`}>
        {parts.map((p, i) =>
          p.mark ? (
            <mark key={i} class="span-mark">
              {p.text}
            </mark>
          ) : (
            <span key={i}>{p.text}</span>
          ),
        )}
        {s.length > chars.length ? <span class="muted">{`… (${s.length - chars.length} more characters)`}</span> : null}
      </pre>
      <div class="action-links">
        <span class="muted">{`characters ${s.ranges.map(([a, b]) => `${a}–${b}`).join(", ")} of ${s.length} · tests.jsonl:${s.testLine}`}</span>
        <Button small icon="list-flat" onClick={() => ctl.go("timeline", { record: s.seq })}>
          Show in timeline
        </Button>
        <Button
          small
          icon="type-hierarchy-sub"
          onClick={() => {
            ctl.setGraph({ node: s.node });
            ctl.go("graph");
          }}
        >
          Show in graph
        </Button>
        <Button small icon="symbol-event" onClick={() => ctl.openRecord(s.seq)}>
          Full record
        </Button>
      </div>
    </div>
  );
}

const SHAPE_LABEL: Record<string, string> = {
  either: "either — each is enough on its own (redundant)",
  both: "both — each is needed (conjunctive)",
  single: "single — one of them is enough alone",
  unclear: "unclear",
};

function ShapeTable({ s }: { s: ShapeView }) {
  return (
    <div class="failure-shape">
      <div class="causing-span-head">
        <Icon name="combine" />
        <span class="cell-title">Failure shape</span>
        <Chip tone={s.shape === "unclear" ? "none" : "cause"}>{SHAPE_LABEL[s.shape] ?? s.shape}</Chip>
      </div>
      <table class="table shape-table">
        <thead>
          <tr>
            <th>Present</th>
            <th class="num">Action happens</th>
            <th class="num">n</th>
          </tr>
        </thead>
        <tbody>
          {s.arms.map((arm) => (
            <tr key={arm.label}>
              <td class="mono">{arm.label}</td>
              <td class="num mono">{pct(arm.p)}</td>
              <td class="num">{arm.n}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <div class="muted">{s.contrasts.map((c) => `${c.label} ${effect(c.effect)} ${interval(c.ci)}`).join(" · ")}</div>
    </div>
  );
}

function FixTable({ fixes }: { fixes: FixView[] }) {
  return (
    <table class="table fix-table">
      <thead>
        <tr>
          <th>Fix</th>
          <th>Verdict</th>
          <th class="num">Harm without → with</th>
          <th class="num">95% interval</th>
          <th>Intended actions</th>
        </tr>
      </thead>
      <tbody>
        {fixes.map((f, i) => (
          <tr key={i} class={`fix-${f.verdict.replace(/\s+/g, "-")}`}>
            <td class="mono">{f.fix.join(" + ")}</td>
            <td>
              <Chip tone={f.verdict === "fixed" ? "clear" : "cause"}>{f.verdict}</Chip>
            </td>
            <td class="num mono nowrap">{rates(f.harm.p_with, f.harm.p_without)}</td>
            <td class="num mono nowrap">{interval(f.harm.ci)}</td>
            <td>
              {f.keeps.length === 0 ? (
                <span class="muted">none</span>
              ) : (
                f.keeps.map((k) => (
                  <div key={k.target}>
                    <code>{k.target}</code>{" "}
                    <span class={k.status === "lost" ? "cause-text" : "muted"}>{`${k.status} (${effect(k.effect)} ${interval(k.ci)})`}</span>
                  </div>
                ))
              )}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** The causing spans found inside the input at `node`, with the action each one caused. */
export function spansAt(inv: Investigation, node: string | null): { action: string; span: SpanView }[] {
  if (!node) return [];
  const out: { action: string; span: SpanView }[] = [];
  for (const a of Object.values(inv.actions)) for (const s of a.causes?.spans ?? []) if (s.node === node) out.push({ action: a.node, span: s });
  return out;
}

/** A link from an input (timeline row, graph node) to its causing span on the Why screen. */
export function CausingSpanLink({ inv, node }: { inv: Investigation; node: string | null }) {
  const { ctl } = useApp();
  const hits = spansAt(inv, node);
  if (!hits.length) return null;
  const { action, span } = hits[0];
  const a = inv.actions[action];
  return (
    <button
      type="button"
      class="srcchip span-link"
      title={`The causing span of ${a ? `${a.tool} #${a.seq}` : "an action"}: ${effect(span.effect)} ${interval(span.ci)}`}
      onClick={(e) => {
        e.stopPropagation();
        ctl.go("why", { action });
      }}
    >
      <Icon name="quote" />
      <span>causing span</span>
    </button>
  );
}
