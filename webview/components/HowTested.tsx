/**
 * How a test was run, compactly: its rung (one recorded call re-sent, agentless re-simulation,
 * the program re-run), the actions its replays took that the recording never made, and what it
 * assumed; and Find the cause's chain, hop by hop from the root input to the action, each hop with
 * its test's verdict. Old runs' tests carry no rung or assumptions: then nothing is shown.
 */
import type { ChainHop, HowTested as How } from "../../core/analysis/types";
import { effect, interval, verdictLabel, verdictTone } from "../labels";
import { Chip, Icon } from "./ui";

const RUNG: Record<1 | 2 | 3, { label: string; title: string }> = {
  1: { label: "one call re-sent", title: "Rung 1: one recorded model call re-sent, with the suspect removed" },
  2: { label: "agentless re-simulation", title: "Rung 2: the agents re-simulated from their recorded requests, without the program" },
  3: { label: "program re-run", title: "Rung 3: the program itself re-run" },
};

export function HowTested({ how }: { how: How | undefined }) {
  if (!how) return null;
  const { rung, assumptions = [], off_tape_actions: offTape } = how;
  // off_tape_actions is on every test, old ones too: shown with the new fields only, so an old
  // run's screen is unchanged
  if (rung === undefined && !assumptions.length) return null;
  return (
    <div class="how-tested cell-sub">
      {rung !== undefined && (
        <span class="how-rung" title={RUNG[rung].title}>
          {`rung ${rung}: ${RUNG[rung].label}`}
        </span>
      )}
      {offTape ? (
        <span class="how-offtape" title="Actions the replays took that the recording never made: answered without running a tool">
          {`${offTape} off-tape action${offTape === 1 ? "" : "s"}`}
        </span>
      ) : null}
      {assumptions.length > 0 && (
        <details class="how-assumptions">
          <summary>{`${assumptions.length} assumption${assumptions.length === 1 ? "" : "s"}`}</summary>
          <ul>
            {assumptions.map((a, i) => (
              <li key={i}>{a}</li>
            ))}
          </ul>
        </details>
      )}
    </div>
  );
}

/** A suspect id as a short name: "vendor:portal/notes.md", "researcher → executor". */
export function hopName(id: string): string {
  if (id.startsWith("input:")) return id.slice(6);
  const m = /^msg:(.+?)->(.+)$/.exec(id);
  if (m) return `${m[1]} \u2192 ${m[2]}`;
  return id;
}

/** Find the cause's chain: root → … → action, each hop labelled with its test's verdict. */
export function Chain({ chain }: { chain: readonly ChainHop[] }) {
  if (!chain.length) return null;
  return (
    <ol class="cause-chain" aria-label="How the cause reached the action, hop by hop">
      <li class="chain-step chain-root">
        <Icon name="file" />
        <code title={chain[0].from}>{hopName(chain[0].from)}</code>
      </li>
      {chain.map((h, i) => (
        <li key={i} class="chain-step">
          <span class="chain-hop">
            <Icon name="arrow-small-right" />
            <Chip tone={verdictTone(h.test.verdict)}>{verdictLabel(h.test.verdict, h.test.role)}</Chip>
            {h.test.effect !== undefined && <span class="mono">{`${effect(h.test.effect)} ${interval(h.test.ci)}`}</span>}
            {h.test.n !== undefined && <span class="muted">{`n = ${h.test.n}`}</span>}
          </span>
          <code title={h.to}>{hopName(h.to)}</code>
          <HowTested how={h.test} />
        </li>
      ))}
    </ol>
  );
}
