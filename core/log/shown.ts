/**
 * Run content shown to a person is text, never control: a run's names, tasks, arguments and
 * outputs may hold terminal escapes (ESC, BEL, CR, backspace: they clear the screen, retitle the
 * window, overwrite a line) or bidi overrides (U+202E makes `safe\u202Etxt.exe` read
 * `safeexe.txt`). {@link forTerminal} escapes them visibly for the CLI's text output;
 * {@link visibleBidi} shows bidi controls as ⟨U+202E⟩ for HTML and the investigator.
 */

import { safeText } from "./sanitize";

/** The bidi formatting characters: embeddings, overrides, isolates, marks. */
export const BIDI_RE = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
const HAS_BIDI = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

/** C0 and C1 controls, DEL and the bidi characters; \n too unless kept (matching controls is the point). */
// eslint-disable-next-line no-control-regex
const UNSAFE_ALL = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
// eslint-disable-next-line no-control-regex
const UNSAFE_BUT_NL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

const escapeOne = (c: string): string => {
  const n = c.charCodeAt(0);
  return n < 0x100 ? `\\x${n.toString(16).padStart(2, "0")}` : `\\u${n.toString(16).padStart(4, "0")}`;
};

/**
 * Text safe to print on a terminal: every control character and bidi control becomes a visible
 * escape (`\x1b`, `\x07`, `\r`→`\x0d`, `\u202e`). `newlines: true` keeps \n (text the CLI laid
 * out itself); by default a newline inside run content is escaped too, so it cannot fake a line.
 */
export function forTerminal(s: string, opts: { newlines?: boolean } = {}): string {
  return s.replace(opts.newlines ? UNSAFE_BUT_NL : UNSAFE_ALL, escapeOne);
}

/** One run-derived value for a line of text output (any value: a run's field may be anything). */
export const shown = (v: unknown): string => forTerminal(safeText(v));

/** Bidi controls shown as ⟨U+202E⟩, never applied (HTML, the investigator, canvas labels). */
export function visibleBidi(s: string): string {
  if (!HAS_BIDI.test(s)) return s;
  return s.replace(BIDI_RE, (c) => `⟨U+${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, "0")}⟩`);
}

/** Whether `s` holds a bidi control (a cheap test before copying). */
export const hasBidi = (s: string): boolean => HAS_BIDI.test(s);
