/**
 * Tests of one tool call written by someone other than the run's writer (core/log/writers.ts): a
 * warning and their claimed findings, each with who wrote it. They are not counted in the
 * candidates' verdicts (core/analysis/foreign.ts); re-running one here writes a line that counts.
 */
import type { ActionView } from "../../core/analysis/types";
import { interval, rates, verdictLabel, effect } from "../labels";
import { Chip, Icon, Section } from "./ui";

export function ForeignTests({ a }: { a: ActionView }) {
  const ts = a.foreignTests ?? [];
  if (!ts.length) return null;
  const who = [...new Set(ts.map((t) => t.by ?? "an unrecorded writer"))].join(", ");
  return (
    <Section title="Tests written by others" icon="warning" note="not counted">
      <div class="note foreign-tests-warning" role="alert">
        <Icon name="warning" />
        <span>{`${ts.length} test${ts.length === 1 ? " of this call was" : "s of this call were"} written by someone other than the run's writer (${who}). ${ts.length === 1 ? "Its finding is" : "Their findings are"} shown as claimed and not counted in the candidates above; re-run a test to count it.`}</span>
      </div>
      <div class="table-scroll">
        <table class="table foreign-tests">
          <thead>
            <tr>
              <th>Intervention</th>
              <th>Claimed finding</th>
              <th class="num">Effect</th>
              <th class="num">With → without</th>
              <th>Written by</th>
              <th class="num">Line</th>
            </tr>
          </thead>
          <tbody>
            {ts.map((t) => (
              <tr key={t.line}>
                <td class="mono">{t.intervention}</td>
                <td>{verdictLabel(t.verdict, t.role)}</td>
                <td class="num mono nowrap">{`${effect(t.effect)} ${interval(t.ci)}`}</td>
                <td class="num mono nowrap">{rates(t.p_with, t.p_without)}</td>
                <td>
                  <Chip tone="unsure" icon="person">
                    {t.by ?? "unrecorded"}
                  </Chip>
                </td>
                <td class="num mono">{`tests.jsonl:${t.line}`}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </Section>
  );
}
