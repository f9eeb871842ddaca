/**
 * Graph colours, read from the --vscode-* variables of the current theme (Cytoscape draws on a
 * canvas, so CSS cannot colour it directly). Values are normalised to opaque rgb() — a colour with
 * alpha is blended over the editor background — because Cytoscape does not read #rrggbbaa.
 */

export interface GraphColors {
  background: string;
  foreground: string;
  muted: string;
  edge: string;
  trusted: string;
  untrusted: string;
  task: string;
  decision: string;
  action: string;
  message: string;
  sensitive: string;
  flagged: string;
  causal: string;
  ruledOut: string;
  focus: string;
  labelBackground: string;
  fontFamily: string;
  /** High-contrast theme: thicker outlines, no fills that rely on hue alone. */
  highContrast: boolean;
}

type Rgba = [number, number, number, number];

/** Parses #rgb, #rgba, #rrggbb, #rrggbbaa, rgb() and rgba(); null for anything else. */
export function parseColor(value: string): Rgba | null {
  const v = value.trim().toLowerCase();
  let m = /^#([0-9a-f]{3,8})$/.exec(v);
  if (m) {
    let h = m[1];
    if (h.length === 3 || h.length === 4) h = [...h].map((c) => c + c).join("");
    if (h.length !== 6 && h.length !== 8) return null;
    const n = (i: number) => parseInt(h.slice(i, i + 2), 16);
    return [n(0), n(2), n(4), h.length === 8 ? n(6) / 255 : 1];
  }
  m = /^rgba?\(\s*([\d.]+)[\s,]+([\d.]+)[\s,]+([\d.]+)(?:[\s,/]+([\d.]+%?))?\s*\)$/.exec(v);
  if (m) {
    const a = m[4] === undefined ? 1 : m[4].endsWith("%") ? parseFloat(m[4]) / 100 : parseFloat(m[4]);
    return [Number(m[1]), Number(m[2]), Number(m[3]), a];
  }
  return null;
}

/** An opaque rgb() string: the colour blended over the background when it has alpha. */
export function opaque(value: string, background: string, fallback: string): string {
  const c = parseColor(value) ?? parseColor(normalize(value)) ?? parseColor(fallback);
  if (!c) return fallback;
  const bg = parseColor(background) ?? [255, 255, 255, 1];
  const a = c[3];
  const mix = (i: number) => Math.round(c[i] * a + bg[i] * (1 - a));
  return `rgb(${mix(0)}, ${mix(1)}, ${mix(2)})`;
}

/** Lets the browser resolve any CSS colour (named colours, hsl…) to rgb(); identity without canvas. */
function normalize(value: string): string {
  try {
    const ctx = document.createElement("canvas").getContext("2d");
    if (!ctx) return value;
    ctx.fillStyle = "#000";
    ctx.fillStyle = value;
    return String(ctx.fillStyle);
  } catch {
    return value;
  }
}

/** Blends two colours: t = 0 gives a, t = 1 gives b. */
export function blend(a: string, b: string, t: number): string {
  const x = parseColor(a);
  const y = parseColor(b);
  if (!x || !y) return a;
  const m = (i: number) => Math.round(x[i] * (1 - t) + y[i] * t);
  return `rgb(${m(0)}, ${m(1)}, ${m(2)})`;
}

export function readColors(el: Element = document.body): GraphColors {
  const cs = getComputedStyle(el);
  const v = (name: string) => cs.getPropertyValue(name).trim();
  const background = opaque(v("--vscode-editor-background"), "#ffffff", "#ffffff");
  const c = (names: string[], fallback: string) => {
    for (const n of names) {
      const x = v(n);
      if (x) return opaque(x, background, fallback);
    }
    return fallback;
  };
  const foreground = c(["--vscode-editor-foreground", "--vscode-foreground"], "#333333");
  const highContrast = document.body.classList.contains("vscode-high-contrast") || document.body.classList.contains("vscode-high-contrast-light");
  return {
    background,
    foreground,
    muted: c(["--vscode-descriptionForeground"], "#717171"),
    edge: c(["--vscode-charts-lines", "--vscode-descriptionForeground"], "#8c8c8c"),
    trusted: c(["--vscode-charts-blue"], "#1a85ff"),
    untrusted: c(["--vscode-charts-orange"], "#d18616"),
    task: c(["--vscode-charts-blue"], "#1a85ff"),
    decision: c(["--vscode-charts-purple"], "#652d90"),
    action: c(["--vscode-charts-green"], "#388a34"),
    message: c(["--vscode-charts-yellow"], "#bf8803"),
    sensitive: c(["--vscode-editorWarning-foreground", "--vscode-charts-yellow"], "#bf8803"),
    flagged: c(["--vscode-errorForeground", "--vscode-charts-red"], "#e51400"),
    causal: c(["--vscode-charts-red", "--vscode-errorForeground"], "#e51400"),
    ruledOut: c(["--vscode-disabledForeground", "--vscode-descriptionForeground"], "#8c8c8c"),
    focus: c(["--vscode-focusBorder"], "#0090f1"),
    labelBackground: background,
    fontFamily: v("--vscode-font-family") || "system-ui, sans-serif",
    highContrast,
  };
}
