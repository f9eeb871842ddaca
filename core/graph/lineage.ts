/**
 * Lineage chains of one node: the observed chain from each untrusted input (or, when none, each
 * input) to the node, one shortest path per root, the first `max` roots by seq. One backward
 * breadth-first search serves every root. Pure and dependency-free: the host uses it for verdicts
 * and case files, the webview computes Why?'s "How it got here" with it from the graph it already
 * holds (investigations do not carry the chains: on big runs they were most of the data).
 */
export interface LineageNode {
  readonly type: string;
  readonly trust?: string | null;
  readonly seq: number;
}

/**
 * Whether a node is an untrusted root. The one test of trust that lineage, the verdict sentence's
 * reach (core/analysis/reach.ts: an input event whose trust is "untrusted") and every screen's
 * label share: anything else (trusted, unset, unknown) is not untrusted.
 */
export function isUntrusted(n: { readonly trust?: unknown } | null | undefined): boolean {
  return n?.trust === "untrusted";
}

/**
 * @param parents the sources of the observed edges into a node, in edge order
 * @param node a node's type, trust and seq
 */
export function lineageChains(target: string, parents: (id: string) => readonly string[], node: (id: string) => LineageNode | undefined, max = 12): string[][] {
  // next[x] is the step from x toward the target
  const next = new Map<string, string | null>([[target, null]]);
  const q = [target];
  for (let i = 0; i < q.length; i++) {
    for (const src of parents(q[i])) {
      if (next.has(src)) continue;
      next.set(src, q[i]);
      q.push(src);
    }
  }
  const inputs = [...next.keys()].filter((n) => n !== target && node(n)?.type === "input");
  let roots = inputs.filter((n) => isUntrusted(node(n)));
  if (!roots.length) roots = inputs;
  roots.sort((a, b) => (node(a)?.seq ?? 0) - (node(b)?.seq ?? 0));
  return roots.slice(0, max).map((r) => {
    const chain: string[] = [];
    for (let x: string | null | undefined = r; x; x = next.get(x)) chain.push(x);
    return chain;
  });
}
