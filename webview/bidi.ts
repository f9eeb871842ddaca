/**
 * Bidi controls in run content are shown, never applied: a tool named `safe\u202Etxt.exe` would
 * otherwise read `safeexe.txt`. Every text the investigator renders passes through Preact's vnode
 * hook, installed once by App.tsx: a text node, or a title / aria-label / alt attribute, holding
 * U+202A–U+202E, U+2066–U+2069, U+200E/F or U+061C shows each as ⟨U+202E⟩. Canvas labels
 * (Cytoscape) do not go through Preact: webview/graph/elements.ts applies {@link visibleBidi} itself.
 */
import { options, type VNode } from "preact";
import { hasBidi, visibleBidi } from "../core/log/shown";

const SHOWN_ATTRS = ["title", "aria-label", "alt", "placeholder", "label"] as const;

let installed = false;

export function installBidiGuard(): void {
  if (installed) return;
  installed = true;
  const prev = options.vnode?.bind(options);
  options.vnode = (vnode: VNode) => {
    const v = vnode as unknown as { type: unknown; props: unknown };
    if (v.type === null) {
      // a text vnode: its props are the text
      if (typeof v.props === "string" && hasBidi(v.props)) v.props = visibleBidi(v.props);
    } else if (v.props && typeof v.props === "object") {
      const p = v.props as Record<string, unknown>;
      for (const k of SHOWN_ATTRS) {
        const x = p[k];
        if (typeof x === "string" && hasBidi(x)) p[k] = visibleBidi(x);
      }
    }
    prev?.(vnode);
  };
}
