/**
 * Small building blocks shared by every screen: icons, chips, sections, key/value lists, empty
 * states, buttons that ask the host to act, progress bars and keyboard-navigable lists. Every
 * string from a run reaches the DOM through these as a text node.
 */
import type { ComponentChildren, JSX } from "preact";
import { useRef, useState } from "preact/hooks";
import type { CandidateStatus, Severity } from "../../core/analysis/types";
import { CANDIDATE_LABEL, CANDIDATE_TONE, SEVERITY_LABEL, effect, type Tone } from "../labels";

export function Icon({ name, label, spin }: { name: string; label?: string; spin?: boolean }) {
  return (
    <span
      class={`codicon codicon-${name}${spin ? " codicon-modifier-spin" : ""}`}
      aria-hidden={label ? undefined : "true"}
      aria-label={label}
      role={label ? "img" : undefined}
    />
  );
}

export function Chip({ tone = "none", icon, children, title }: { tone?: Tone; icon?: string; children: ComponentChildren; title?: string }) {
  return (
    <span class={`chip tone-${tone}`} title={title}>
      {icon && <Icon name={icon} />}
      {children}
    </span>
  );
}

const SEVERITY_ICON: Record<Severity, string> = { high: "error", review: "warning", info: "info" };
const SEVERITY_TONE: Record<Severity, Tone> = { high: "cause", review: "unsure", info: "info" };

export function SeverityChip({ severity, count }: { severity: Severity; count?: number }) {
  return (
    <Chip tone={SEVERITY_TONE[severity]} icon={SEVERITY_ICON[severity]} title={`${SEVERITY_LABEL[severity]} alerts`}>
      {count === undefined ? SEVERITY_LABEL[severity] : `${count} ${SEVERITY_LABEL[severity].toLowerCase()}`}
    </Chip>
  );
}

export function StatusChip({ status }: { status: CandidateStatus }) {
  return <Chip tone={CANDIDATE_TONE[status]}>{CANDIDATE_LABEL[status]}</Chip>;
}

export function TrustChip({ trust }: { trust: string | null | undefined }) {
  if (trust === "untrusted")
    return (
      <Chip tone="unsure" icon="workspace-untrusted">
        untrusted
      </Chip>
    );
  if (trust === "trusted")
    return (
      <Chip tone="clear" icon="workspace-trusted">
        trusted
      </Chip>
    );
  return null;
}

/** A flag of a timeline row or a record (untrusted, sensitive, error, stub, blocked, alert). */
export function Flag({ flag }: { flag: string }) {
  const tones: Record<string, [Tone, string]> = {
    untrusted: ["unsure", "workspace-untrusted"],
    sensitive: ["info", "shield"],
    error: ["cause", "error"],
    stub: ["none", "debug-disconnect"],
    blocked: ["cause", "circle-slash"],
    alert: ["cause", "warning"],
  };
  const [tone, icon] = tones[flag] ?? ["none", "circle-filled"];
  return (
    <Chip tone={tone} icon={icon}>
      {flag}
    </Chip>
  );
}

/** A signed effect with a bar from the centre: red for a positive (causal) effect. */
export function EffectBar({ value, ci }: { value: number | null | undefined; ci?: [number, number] | null }) {
  if (value === null || value === undefined) return <span class="muted">—</span>;
  const clamp = (x: number) => Math.max(-1, Math.min(1, x));
  const v = clamp(value);
  const left = v < 0 ? 50 + v * 50 : 50;
  const width = Math.abs(v) * 50;
  return (
    <span class="effect">
      <span class="effect-num">{effect(value)}</span>
      <span class="effect-track" aria-hidden="true">
        {ci && <span class="effect-ci" style={{ left: `${50 + clamp(ci[0]) * 50}%`, width: `${(clamp(ci[1]) - clamp(ci[0])) * 50}%` }} />}
        <span class={`effect-bar ${v < 0 ? "neg" : "pos"}`} style={{ left: `${left}%`, width: `${width}%` }} />
        <span class="effect-mid" />
      </span>
    </span>
  );
}

/** A 0..1 share as a thin meter with its percentage. */
export function Meter({ value, label }: { value: number; label?: string }) {
  const v = Math.max(0, Math.min(1, value));
  return (
    <span class="meter" title={label}>
      <span class="meter-track" aria-hidden="true">
        <span class="meter-fill" style={{ width: `${v * 100}%` }} />
      </span>
      <span class="meter-num">{`${Math.round(v * 100)}%`}</span>
    </span>
  );
}

export function Section({
  title,
  icon,
  actions,
  children,
  id,
  note,
}: {
  title: string;
  icon?: string;
  actions?: ComponentChildren;
  children: ComponentChildren;
  id?: string;
  note?: ComponentChildren;
}) {
  return (
    <section class="section" aria-labelledby={id ? `${id}-h` : undefined}>
      <header class="section-head">
        <h2 id={id ? `${id}-h` : undefined}>
          {icon && <Icon name={icon} />}
          {title}
        </h2>
        {note && <span class="section-note">{note}</span>}
        {actions && <span class="section-actions">{actions}</span>}
      </header>
      <div class="section-body">{children}</div>
    </section>
  );
}

export function Empty({ icon = "info", children }: { icon?: string; children: ComponentChildren }) {
  return (
    <div class="empty">
      <Icon name={icon} />
      <span>{children}</span>
    </div>
  );
}

/** A definition list of label → value pairs. */
export function KeyValues({ rows }: { rows: [string, ComponentChildren][] }) {
  return (
    <dl class="kv">
      {rows.map(([k, v]) => (
        <div class="kv-row" key={k}>
          <dt>{k}</dt>
          <dd>{v}</dd>
        </div>
      ))}
    </dl>
  );
}

export function Button(props: {
  icon?: string;
  children?: ComponentChildren;
  onClick?: () => void;
  disabled?: boolean;
  primary?: boolean;
  title?: string;
  small?: boolean;
  label?: string;
  pressed?: boolean;
}) {
  const cls = ["btn", props.primary ? "btn-primary" : "btn-secondary", props.small ? "btn-small" : "", !props.children ? "btn-icon" : ""].join(" ");
  return (
    <button
      type="button"
      class={cls}
      onClick={props.onClick}
      disabled={props.disabled}
      title={props.title}
      aria-label={props.label}
      aria-pressed={props.pressed}
    >
      {props.icon && <Icon name={props.icon} />}
      {props.children}
    </button>
  );
}

/**
 * A link that asks the host to act (open a file at a line, open a blob…). In the static report the
 * same information shows as plain text.
 */
export function HostLink({
  enabled,
  onClick,
  icon,
  children,
  title,
}: {
  enabled: boolean;
  onClick: () => void;
  icon?: string;
  children: ComponentChildren;
  title?: string;
}) {
  if (!enabled) {
    return (
      <span class="hostlink-text" title={title}>
        {icon && <Icon name={icon} />}
        {children}
      </span>
    );
  }
  return (
    <button type="button" class="linkbtn" onClick={onClick} title={title}>
      {icon && <Icon name={icon} />}
      {children}
    </button>
  );
}

export function Progress({ done, total, label }: { done: number; total: number; label?: string }) {
  const known = total > 0;
  return (
    <div
      class="progress"
      role="progressbar"
      aria-valuemin={0}
      aria-valuemax={known ? total : undefined}
      aria-valuenow={known ? done : undefined}
      aria-label={label}
    >
      <div class={`progress-fill${known ? "" : " indeterminate"}`} style={known ? { width: `${Math.min(100, (done / total) * 100)}%` } : undefined} />
    </div>
  );
}

/**
 * Roving keyboard focus over a list of rows: one row is in the tab order, arrows move between rows,
 * Home/End jump, Enter activates (each row handles Enter itself).
 */
export function useRoving<T extends HTMLElement = HTMLElement>(count: number) {
  const [active, setActive] = useState(0);
  const ref = useRef<T>(null);
  const cur = Math.max(0, Math.min(active, count - 1));
  const move = (to: number) => {
    const next = Math.max(0, Math.min(count - 1, to));
    setActive(next);
    ref.current?.querySelector<HTMLElement>(`[data-index="${next}"]`)?.focus();
  };
  const onKeyDown = (e: JSX.TargetedKeyboardEvent<HTMLElement>) => {
    const t = e.target as HTMLElement;
    if (!t.hasAttribute("data-index")) return;
    const i = Number(t.getAttribute("data-index"));
    const step: Record<string, number> = { ArrowDown: 1, ArrowUp: -1, PageDown: 10, PageUp: -10 };
    if (e.key in step) move(i + step[e.key]);
    else if (e.key === "Home") move(0);
    else if (e.key === "End") move(count - 1);
    else return;
    e.preventDefault();
  };
  const item = (i: number) => ({ tabIndex: i === cur ? 0 : -1, "data-index": i, onFocus: () => setActive(i) });
  return { ref, onKeyDown, item };
}

/** Calls fn on Enter or Space (for rows that open something). */
export function onActivate(fn: () => void) {
  return (e: JSX.TargetedKeyboardEvent<HTMLElement>) => {
    if ((e.key === "Enter" || e.key === " ") && e.target === e.currentTarget) {
      e.preventDefault();
      fn();
    }
  };
}
