/**
 * The case file: one action's investigation, written for someone who was not there — what
 * happened, the probable cause and the words in it that did the harm, what else was tested and
 * ruled out, how the causes combine, whether a fix works, the recorded path — with every claim
 * linked to its evidence in the run: the event (seq and hash), the blob, the tests.jsonl line and
 * its hash. It is built from the log and tests.jsonl alone (no replay), so it says only what the
 * recorded tests measured. Markdown on its own, or the same as HTML for the static report.
 */
import path from "node:path";
import type { RunData } from "../log/reader";
import { verifyRunData } from "../log/verify";
import { RunModel } from "../graph/model";
import { targetHits } from "../graph/graph";
import { countedRun } from "../analysis/foreign";
import { forTerminal, visibleBidi } from "../log/shown";
import {
  caseContext,
  chainHops,
  evidenceTable,
  failureShape,
  findings,
  fixChecks,
  foreignTests,
  headerSection,
  ivl,
  otherInputs,
  probableCause,
  recordedPath,
  sgn,
  theLog,
  whatHappened,
  type Block,
  type EvidenceLink,
  type Inline,
} from "./case-sections";

export interface CaseFile {
  run: string;
  target: string;
  blocks: Block[];
  evidence: EvidenceLink[];
  /** What the case found, in short (for the extension and the report index). */
  headline: string;
}

export interface CaseOptions {
  target: string;
  /** The folder the case file is written to: links are relative to it (default: the run folder). */
  from?: string;
}

/** The case file of one action in a run: each section in order (case-sections.ts), and a one-line headline. */
export function buildCase(whole: RunData, opts: CaseOptions): CaseFile {
  // tests written by anyone but the run's writer are listed and flagged, never counted (analysis/foreign.ts)
  const run = countedRun(whole);
  const m = new RunModel(run);
  // "./" first: a run folder named "javascript:…" is a path here, never a link's scheme
  const c = caseContext(whole, run, m, opts.target, relativeDir(path.relative(opts.from ?? run.dir, run.dir)));
  const target = opts.target;
  const hits = targetHits(m, target);
  const v = verifyRunData(run);
  const foreign = whole.tests.filter((t) => t.foreign && t.target === target);
  headerSection(c, hits, v, foreign);
  whatHappened(c, hits);
  const found = findings(run, m, target);
  probableCause(c, found, foreign.length > 0);
  chainHops(c, found.hops);
  otherInputs(c, found);
  if (foreign.length) foreignTests(c, foreign);
  failureShape(c, found);
  const harms = run.tests.filter((t) => t.fix_role === "harm" && t.target === target);
  fixChecks(c, harms);
  recordedPath(c, hits[0], found);
  theLog(c, v);
  evidenceTable(c);

  const span = run.tests.find((t) => t.causing_span && t.target === target && (!found.attr || t.attribution === found.attr));
  const headline = found.primary.length
    ? `${found.primary.map((t) => `${t.intervention} (${sgn(t.effect)} ${ivl(t.ci)})`).join(", ")}${span ? "; causing span found" : ""}${harms.length ? `; fix: ${harms.at(-1)!.fix_verdict}` : ""}`
    : "no confirmed cause";
  return {
    run: m.runId,
    target,
    blocks: c.blocks,
    evidence: c.evidence,
    headline: foreign.length ? `${headline}; ${foreign.length} test${foreign.length === 1 ? "" : "s"} by others not counted` : headline,
  };
}

// ----------------------------------------------------------------------------- rendering

/** A relative folder as a link's start: "." or "./a/b" or "../a", with "/" separators. */
function relativeDir(rel: string): string {
  const r = rel.split(path.sep).join("/");
  if (!r) return ".";
  return r === ".." || r.startsWith("../") ? r : `./${r}`;
}

/**
 * A link the case writes, percent-encoded: each path segment (a run folder's name is run
 * content) and the fragment encoded whole, so no character in it starts a scheme, a query or a
 * second fragment. Links are always relative ("./…", "../…").
 */
export function hrefOf(link: string): string {
  const hash = link.indexOf("#");
  const p = hash < 0 ? link : link.slice(0, hash);
  const frag = hash < 0 ? "" : `#${encodeURIComponent(link.slice(hash + 1))}`;
  const segs = p.split("/").map((s) => (s === "." || s === ".." ? s : encodeURIComponent(s)));
  const joined = segs.join("/");
  return (joined === "." || joined === ".." || joined.startsWith("./") || joined.startsWith("../") ? joined : `./${joined}`) + frag;
}

const mdEsc = (s: string) => s.replace(/([\\`*_[\]|<>])/g, "\\$1");

function mdInline(xs: Inline[]): string {
  return xs
    .map((x) => {
      if (typeof x === "string") return mdEsc(x);
      if ("code" in x) return "`" + x.code.replace(/`/g, "ˋ") + "`";
      if ("strong" in x) return `**${mdEsc(x.strong)}**`;
      return `[${mdEsc(x.text)}](${hrefOf(x.link)}${x.title ? ` "${x.title.replace(/"/g, "'")}"` : ""})`;
    })
    .join("");
}

export function caseMarkdown(c: CaseFile): string {
  const out: string[] = [];
  for (const b of c.blocks) {
    if ("h" in b) out.push(`${"#".repeat(b.h)} ${mdEsc(b.text)}`, "");
    else if ("p" in b) out.push(mdInline(b.p), "");
    else if ("quote" in b)
      out.push(
        ...mdInline(b.quote)
          .split("\n")
          .map((l) => `> ${l}`),
        "",
      );
    else if ("ul" in b) out.push(...b.ul.map((li) => `- ${mdInline(li)}`), "");
    else {
      out.push(`| ${b.table.head.map(mdEsc).join(" | ")} |`, `|${b.table.head.map(() => "---").join("|")}|`);
      // a | inside a cell (code spans included) would end the cell
      for (const r of b.table.rows)
        out.push(
          `| ${r.map((cell) => mdInline(cell.map((x) => (typeof x === "object" && "code" in x ? { code: x.code.replace(/\|/g, "\\|") } : x))).replace(/\n/g, " ")).join(" | ")} |`,
        );
      out.push("");
    }
  }
  // run content in a file a person reads: bidi controls shown, never applied; other controls escaped
  return forTerminal(visibleBidi(out.join("\n")), { newlines: true });
}

const esc = (s: string) => visibleBidi(s).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

function htmlInline(xs: Inline[]): string {
  return xs
    .map((x) => {
      if (typeof x === "string") return esc(x);
      if ("code" in x) return `<code>${esc(x.code)}</code>`;
      if ("strong" in x) return `<strong>${esc(x.strong)}</strong>`;
      return `<a href="${esc(hrefOf(x.link))}"${x.title ? ` title="${esc(x.title)}"` : ""}>${esc(x.text)}</a>`;
    })
    .join("");
}

/** The case as HTML (every text escaped): a section of the static report. */
export function caseHtml(c: CaseFile): string {
  const out: string[] = [`<section class="causeway-case" data-run="${esc(c.run)}" data-target="${esc(c.target)}">`];
  for (const b of c.blocks) {
    if ("h" in b) out.push(`<h${b.h + 1}>${esc(b.text)}</h${b.h + 1}>`);
    else if ("p" in b) out.push(`<p>${htmlInline(b.p)}</p>`);
    else if ("quote" in b) out.push(`<blockquote>${htmlInline(b.quote)}</blockquote>`);
    else if ("ul" in b) out.push(`<ul>${b.ul.map((li) => `<li>${htmlInline(li)}</li>`).join("")}</ul>`);
    else
      out.push(
        `<table><thead><tr>${b.table.head.map((h) => `<th>${esc(h)}</th>`).join("")}</tr></thead><tbody>${b.table.rows.map((r) => `<tr>${r.map((cell) => `<td>${htmlInline(cell)}</td>`).join("")}</tr>`).join("")}</tbody></table>`,
      );
  }
  out.push("</section>");
  return out.join("\n");
}

/** Targets a run has a recorded attribution for (for the report's case sections). */
export function attributedTargets(run: RunData): string[] {
  const out: string[] = [];
  for (const t of run.tests) if (typeof t.attribution === "string" && typeof t.target === "string" && !out.includes(t.target)) out.push(t.target);
  return out;
}
