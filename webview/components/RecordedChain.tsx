/**
 * Find the cause's chain for the selected tool call as tests.jsonl records it (the Investigation's
 * `chain`, core/analysis/chains.ts), so it shows after a reload and in the static report, not only
 * in the result panel right after a run. A chain written by someone other than the run's writer is
 * shown apart, under a warning naming the writer, and not counted.
 */
import type { ActionView, RecordedChain as Recorded } from "../../core/analysis/types";
import { Chain } from "./HowTested";
import { Chip, Icon, Section } from "./ui";

const lines = (c: Recorded) => `tests.jsonl:${c.lines.join(", ")}`;

export function RecordedChain({ a }: { a: ActionView }) {
  const { chain, foreignChain } = a;
  if (!chain?.hops.length && !foreignChain?.hops.length) return null;
  return (
    <Section title="How its words reached the action" icon="arrow-right" note="Find the cause, hop by hop">
      {chain && chain.hops.length > 0 && (
        <div class="recorded-chain">
          <div class="muted">
            {`Each hop was tested on its own: without it, the action changed as shown. The words passed between agents; only the first is a cause. (${lines(chain)})`}
          </div>
          <Chain chain={chain.hops} />
        </div>
      )}
      {foreignChain && foreignChain.hops.length > 0 && (
        <div class="recorded-chain recorded-chain-foreign">
          <div class="note foreign-chain-warning" role="alert">
            <Icon name="warning" />
            <span>{`A chain written by someone other than the run's writer (${foreignChain.by ?? "an unrecorded writer"}): shown as claimed, not counted; re-run Find the cause to count it. (${lines(foreignChain)})`}</span>
          </div>
          <Chip tone="unsure" icon="person">
            {foreignChain.by ?? "unrecorded"}
          </Chip>
          <Chain chain={foreignChain.hops} />
        </div>
      )}
    </Section>
  );
}
