/** The hostile run of ./hostile-text.cjs, typed for the TypeScript tests (the CLI loads the .cjs itself). */
import { createRequire } from "node:module";
import type { System } from "../../../core/sdk/system";

interface HostileText {
  RETITLE: string;
  CLEAR: string;
  FAKE_LINE: string;
  RLO: string;
  BIDI_NAME: string;
  /** Every raw control the run carries. */
  RAW_TERMINAL: string[];
  /** Its bidi controls. */
  RAW_BIDI: string[];
  hostileTextSystem: (S: typeof System) => System;
  /** Records the run into root/<runId> (default hostile-text) and returns its folder. */
  recordHostileText: (S: typeof System, root: string, runId?: string) => Promise<string>;
}

export const HOSTILE_TEXT = createRequire(import.meta.url)("./hostile-text.cjs") as HostileText;
export const { RAW_TERMINAL, RAW_BIDI, recordHostileText } = HOSTILE_TEXT;
