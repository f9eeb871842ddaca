/**
 * Blobs as read-only virtual documents (causeway-blob: scheme), pretty-printed. A blob's URI names
 * the run folder and the ref; only runs the extension knows are read, and only refs that are
 * sha256: plus 64 hex digits (the blob store refuses anything else before building a path).
 */
import * as vscode from "vscode";
import path from "node:path";
import { BlobStore } from "../core/log/blobs";
import type { Services } from "./services";

export const BLOB_SCHEME = "causeway-blob";
const REF_RE = /^sha256:[0-9a-f]{64}$/;
/** Longest text shown; longer blobs are cut with a note. */
const MAX_CHARS = 4 * 1024 * 1024;

export function blobUri(run: string, ref: string): vscode.Uri {
  const name = path.basename(run).replace(/[^\w.-]+/g, "_") || "run";
  return vscode.Uri.from({ scheme: BLOB_SCHEME, path: `/${name}/${ref.slice(7, 19)}`, query: new URLSearchParams({ run, ref }).toString() });
}

export function parseBlobUri(uri: vscode.Uri): { run: string; ref: string } | undefined {
  const q = new URLSearchParams(uri.query);
  const run = q.get("run");
  const ref = q.get("ref");
  return run && ref && REF_RE.test(ref) ? { run, ref } : undefined;
}

/** The blob's text: the string itself, or its value as indented JSON. */
export function blobText(run: string, ref: string): { text: string; json: boolean } {
  const r = new BlobStore(run).get(ref);
  if (!r.ok) return { text: vscode.l10n.t("Causeway cannot show this blob: {0}", r.message) + `\n\nref: ${ref}\nrun: ${run}\n`, json: false };
  let text: string;
  let json = false;
  if (typeof r.value === "string") text = r.value;
  else {
    try {
      text = JSON.stringify(r.value, null, 2) ?? r.canonical;
      json = true;
    } catch {
      text = r.canonical;
    }
  }
  if (text.length > MAX_CHARS) text = text.slice(0, MAX_CHARS) + `\n\n… cut at ${MAX_CHARS} characters of ${r.bytes} bytes`;
  return { text, json };
}

export function registerBlobs(s: Services): void {
  const provider: vscode.TextDocumentContentProvider = {
    provideTextDocumentContent(uri) {
      const p = parseBlobUri(uri);
      if (!p) return vscode.l10n.t("Not a Causeway blob address.");
      if (!s.store.has(p.run)) return vscode.l10n.t("The run {0} is not one of this workspace's runs.", p.run);
      return blobText(p.run, p.ref).text;
    },
  };
  s.context.subscriptions.push(vscode.workspace.registerTextDocumentContentProvider(BLOB_SCHEME, provider));
}

/** Opens a blob read-only, as JSON when it is JSON. */
export async function openBlob(s: Services, run: string, ref: string): Promise<void> {
  if (!REF_RE.test(ref) || !s.store.has(run)) {
    void vscode.window.showWarningMessage(vscode.l10n.t("Causeway: that blob is not part of a run in this workspace."));
    return;
  }
  const { json } = blobText(run, ref);
  let doc = await vscode.workspace.openTextDocument(blobUri(run, ref));
  if (json && doc.languageId !== "json") doc = await vscode.languages.setTextDocumentLanguage(doc, "json");
  await vscode.window.showTextDocument(doc, { preview: true });
}
