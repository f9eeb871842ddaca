/**
 * Agent names for recordings that carry no name of their own (the preload, the gateway): the role a
 * system prompt gives itself ("You are the researcher…" → researcher), never a common word, else
 * the prompt's first words with a short hash.
 */
import { createHash } from "node:crypto";
import type { RequestBlock } from "./codec";

/** Words that describe an assistant rather than name a role: skipped before the role word. */
const QUALIFIERS = new Set([
  "a",
  "an",
  "the",
  "helpful",
  "friendly",
  "expert",
  "very",
  "highly",
  "skilled",
  "experienced",
  "senior",
  "careful",
  "diligent",
  "smart",
  "ai",
  "virtual",
  "our",
  "my",
  "your",
  "this",
  "specialised",
  "specialized",
  "dedicated",
  "professional",
]);

/**
 * Words that follow "you are" without naming a role ("you are given…", "you are now…", "you are
 * responsible for…"): never an agent's name. Participles, adverbs and common adjectives are
 * refused by their endings as well.
 */
const NOT_A_ROLE = new Set([
  "assistant",
  "model",
  "language",
  "large",
  "world",
  "agent",
  "bot",
  "chatbot",
  "system",
  "program",
  "tool",
  "given",
  "going",
  "now",
  "here",
  "there",
  "to",
  "not",
  "never",
  "always",
  "only",
  "just",
  "also",
  "about",
  "currently",
  "responsible",
  "able",
  "unable",
  "allowed",
  "free",
  "part",
  "in",
  "on",
  "at",
  "of",
  "for",
  "with",
  "one",
  "being",
  "tasked",
  "asked",
  "provided",
  "supposed",
  "expected",
  "required",
  "designed",
  "built",
  "trained",
  "powered",
  "connected",
  "working",
  "acting",
  "playing",
  "helping",
  "assisting",
  "talking",
  "speaking",
  "chatting",
  "operating",
  "running",
  "using",
  "reviewing",
  "reading",
  "writing",
  "so",
  "as",
  "that",
  "what",
  "who",
  "please",
  "should",
  "must",
  "will",
  "can",
  "may",
  "good",
  "great",
  "best",
  "new",
  "next",
  "first",
  "last",
]);

function roleWord(word: string): string | undefined {
  const w = word.toLowerCase();
  if (NOT_A_ROLE.has(w) || QUALIFIERS.has(w)) return undefined;
  if (/(?:ed|ing|ly)$/.test(w) && w.length > 4) return undefined;
  return w;
}

/** The role a system prompt gives itself: "You are the researcher…", "Your role is planner", "Act as the executor". */
function roleOf(text: string): string | undefined {
  for (const lead of text.matchAll(/\b(?:you are|you're|your role is(?: that of)?|act as|role:)\s+/gi)) {
    // after the lead: qualifiers ("a helpful"), then the role word; anything else is a sentence
    const words = text.slice(lead.index + lead[0].length, lead.index + lead[0].length + 120).match(/[A-Za-z][\w-]*/g) ?? [];
    const first = words.slice(0, 4).find((w) => !QUALIFIERS.has(w.toLowerCase()));
    const w = first && first.length >= 2 && first.length <= 31 ? roleWord(first) : undefined;
    if (w) return w;
  }
  return undefined;
}

/**
 * A stable agent name from a request's system prompt: "You are the researcher…" → researcher;
 * otherwise `agent-` with the prompt's first words and a short hash ("Answer briefly." →
 * `agent-answer-briefly-3f2a`), so two unnamed agents differ and each says what it was told;
 * "agent" when there is no system prompt.
 */
export function agentFromPrompt(blocks: readonly RequestBlock[]): string {
  const sys = blocks.find((b) => b.role === "system" || b.role === "developer");
  if (!sys) return "agent";
  const text = typeof sys.value === "string" ? sys.value : JSON.stringify(sys.value);
  const role = roleOf(text);
  if (role) return role;
  const words = (text.toLowerCase().match(/[a-z0-9]+/g) ?? []).slice(0, 3).join("-").slice(0, 32);
  const hash = createHash("sha256").update(text).digest("hex").slice(0, 4);
  return words ? `agent-${words}-${hash}` : `agent-${hash}`;
}
