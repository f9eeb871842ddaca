/**
 * The suspects the latest Find the cause of this tool call could not test (rung 1: only the one
 * recorded call that made the action was re-sent, and these are not in its request), each with
 * why, from tests.jsonl (the Investigation's `notTested`, core/analysis/not-tested.ts). They are
 * neither causes nor ruled out. Specs and reasons come from the run folder: shown as text only.
 */
import type { ActionView } from "../../core/analysis/types";
import { hopName } from "./HowTested";
import { Section } from "./ui";

export function NotTested({ a }: { a: ActionView }) {
  const nt = a.notTested;
  if (!nt?.items.length) return null;
  return (
    <Section title="Not tested" icon="circle-slash" note={`${nt.items.length} suspect${nt.items.length === 1 ? "" : "s"}`}>
      <div class="not-tested">
        <div class="muted">
          {`Find the cause could not test these, so they are neither causes nor ruled out. Replaying more needs the program, or a recording the whole run can be re-simulated from. (tests.jsonl:${nt.line})`}
        </div>
        <ul class="not-tested-list">
          {nt.items.map((x, i) => (
            <li key={i}>
              <code title={x.spec}>{hopName(x.spec)}</code>
              <span class="muted">{`: ${x.reason}`}</span>
            </li>
          ))}
        </ul>
      </div>
    </Section>
  );
}
