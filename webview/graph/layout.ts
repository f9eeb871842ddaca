/**
 * A left-to-right layered layout for the data-flow graph, fast enough for thousands of nodes:
 *   1. layers by longest path, walking nodes in event order (an edge against that order is ignored
 *      for layering, so the layout never loops);
 *   2. order within each layer by barycentre sweeps (down using predecessors, up using
 *      successors), which removes most crossings;
 *   3. x from the layer, y from the rank in the layer, each layer centred on the axis.
 * Cost: O(sweeps · (E + N log N)).
 */

export interface LayoutNode {
  id: string;
  /** Event order: the layout's tie-breaker and direction. */
  seq: number;
}

export interface LayoutEdge {
  src: string;
  dst: string;
}

export interface LayoutOptions {
  /** Horizontal distance between layers. */
  dx?: number;
  /** Vertical distance between nodes of one layer. */
  dy?: number;
  /** Barycentre passes (alternating down and up). */
  sweeps?: number;
  /**
   * Sources (nodes nothing points into) go in the layer just before their first successor instead
   * of all in the first layer: an input sits beside the call that read it.
   */
  pullSources?: boolean;
}

export interface Layout {
  positions: Map<string, { x: number; y: number }>;
  layers: string[][];
}

export function layeredLayout(nodes: readonly LayoutNode[], edges: readonly LayoutEdge[], opts: LayoutOptions = {}): Layout {
  const dx = opts.dx ?? 180;
  const dy = opts.dy ?? 60;
  const sweeps = opts.sweeps ?? 4;

  const order = [...nodes].sort((a, b) => a.seq - b.seq);
  const rank = new Map<string, number>();
  order.forEach((n, i) => rank.set(n.id, i));

  // Forward edges only (in event order), deduplicated.
  const preds = new Map<string, string[]>();
  const succs = new Map<string, string[]>();
  const seen = new Set<string>();
  for (const e of edges) {
    const a = rank.get(e.src);
    const b = rank.get(e.dst);
    if (a === undefined || b === undefined || a >= b) continue;
    const key = `${e.src}\u0000${e.dst}`;
    if (seen.has(key)) continue;
    seen.add(key);
    (preds.get(e.dst) ?? preds.set(e.dst, []).get(e.dst)!).push(e.src);
    (succs.get(e.src) ?? succs.set(e.src, []).get(e.src)!).push(e.dst);
  }

  // 1. Longest-path layering.
  const layer = new Map<string, number>();
  let maxLayer = 0;
  for (const n of order) {
    let l = 0;
    for (const p of preds.get(n.id) ?? []) l = Math.max(l, layer.get(p)! + 1);
    layer.set(n.id, l);
    if (l > maxLayer) maxLayer = l;
  }
  if (opts.pullSources) {
    for (const n of order) {
      const next = succs.get(n.id);
      if (preds.has(n.id) || !next) continue;
      layer.set(n.id, Math.min(...next.map((x) => layer.get(x)!)) - 1);
    }
  }
  const layers: string[][] = Array.from({ length: maxLayer + 1 }, () => []);
  for (const n of order) layers[layer.get(n.id)!].push(n.id);

  // 2. Barycentre sweeps over centred positions.
  const pos = new Map<string, number>();
  const place = (ids: string[]) => {
    const mid = (ids.length - 1) / 2;
    ids.forEach((id, i) => pos.set(id, i - mid));
  };
  layers.forEach(place);
  const reorder = (ids: string[], neighbours: Map<string, string[]>) => {
    const bary = new Map<string, number>();
    for (const id of ids) {
      const ns = neighbours.get(id);
      if (!ns || !ns.length) {
        bary.set(id, pos.get(id)!);
        continue;
      }
      let s = 0;
      for (const n of ns) s += pos.get(n)!;
      bary.set(id, s / ns.length);
    }
    // Stable: ties keep the current order.
    const idx = new Map(ids.map((id, i) => [id, i]));
    ids.sort((a, b) => bary.get(a)! - bary.get(b)! || idx.get(a)! - idx.get(b)!);
    place(ids);
  };
  for (let s = 0; s < sweeps; s++) {
    if (s % 2 === 0) for (let l = 1; l <= maxLayer; l++) reorder(layers[l], preds);
    else for (let l = maxLayer - 1; l >= 0; l--) reorder(layers[l], succs);
  }

  // 3. Coordinates.
  const positions = new Map<string, { x: number; y: number }>();
  layers.forEach((ids, l) => {
    for (const id of ids) positions.set(id, { x: l * dx, y: pos.get(id)! * dy });
  });
  return { positions, layers };
}

/** How many pairs of edges between adjacent layers cross (a quality measure for tests). */
export function crossings(layout: Layout, edges: readonly LayoutEdge[]): number {
  const layerOf = new Map<string, number>();
  layout.layers.forEach((ids, l) => ids.forEach((id) => layerOf.set(id, l)));
  const spans: [number, number][][] = layout.layers.map(() => []);
  for (const e of edges) {
    const a = layerOf.get(e.src);
    const b = layerOf.get(e.dst);
    if (a === undefined || b === undefined || b !== a + 1) continue;
    spans[a].push([layout.positions.get(e.src)!.y, layout.positions.get(e.dst)!.y]);
  }
  let n = 0;
  for (const s of spans) {
    for (let i = 0; i < s.length; i++) {
      for (let j = i + 1; j < s.length; j++) {
        if ((s[i][0] - s[j][0]) * (s[i][1] - s[j][1]) < 0) n++;
      }
    }
  }
  return n;
}

export interface ForceOptions {
  /** The preferred edge length (and the distance at which repulsion and attraction balance). */
  length?: number;
  iterations?: number;
}

/**
 * A force-directed placement (Fruchterman–Reingold) for a few dozen nodes, such as the grouped
 * view's groups, where layers would make a chain too wide to read. It starts from the given
 * positions and uses no randomness, so the same run always looks the same. Cost
 * O(iterations · N²): 40 nodes and 300 iterations are about half a million steps, a few
 * milliseconds (Cytoscape's cose took most of a second for the same nodes, measuring labels).
 */
export function forceLayout(
  ids: readonly string[],
  edges: readonly LayoutEdge[],
  start: ReadonlyMap<string, { x: number; y: number }>,
  opts: ForceOptions = {},
): Map<string, { x: number; y: number }> {
  const k = opts.length ?? 160;
  const iterations = opts.iterations ?? 300;
  const n = ids.length;
  const index = new Map(ids.map((id, i) => [id, i] as const));
  const x = new Float64Array(n);
  const y = new Float64Array(n);
  ids.forEach((id, i) => {
    const p = start.get(id) ?? { x: 0, y: 0 };
    // nodes that start on one spot are parted by their index, not at random
    x[i] = p.x + (i % 7) * 0.01;
    y[i] = p.y + (i % 5) * 0.01;
  });
  const links: [number, number][] = [];
  const seen = new Set<string>();
  for (const e of edges) {
    const a = index.get(e.src);
    const b = index.get(e.dst);
    if (a === undefined || b === undefined || a === b) continue;
    const key = a < b ? `${a}|${b}` : `${b}|${a}`;
    if (seen.has(key)) continue;
    seen.add(key);
    links.push([a, b]);
  }
  const dxs = new Float64Array(n);
  const dys = new Float64Array(n);
  const t0 = k * Math.max(1, Math.sqrt(n)) * 0.5;
  for (let it = 0; it < iterations; it++) {
    dxs.fill(0);
    dys.fill(0);
    for (let i = 0; i < n; i++) {
      for (let j = i + 1; j < n; j++) {
        let ddx = x[i] - x[j];
        let ddy = y[i] - y[j];
        let d2 = ddx * ddx + ddy * ddy;
        if (d2 < 1e-6) {
          ddx = 0.01 * (1 + ((i + j) % 3));
          ddy = 0.01;
          d2 = ddx * ddx + ddy * ddy;
        }
        // (k²/d) along the unit vector (ddx/d), four times as strong inside 0.8 k: labelled nodes need room
        const f = ((k * k) / d2) * (d2 < 0.64 * k * k ? 4 : 1);
        dxs[i] += ddx * f;
        dys[i] += ddy * f;
        dxs[j] -= ddx * f;
        dys[j] -= ddy * f;
      }
    }
    for (const [a, b] of links) {
      const ddx = x[a] - x[b];
      const ddy = y[a] - y[b];
      const d = Math.sqrt(ddx * ddx + ddy * ddy) || 0.01;
      const f = d / k; // (d²/k) along the unit vector
      dxs[a] -= ddx * f;
      dys[a] -= ddy * f;
      dxs[b] += ddx * f;
      dys[b] += ddy * f;
    }
    // a weak pull to the centre keeps parts that no edge joins from drifting away
    for (let i = 0; i < n; i++) {
      dxs[i] -= x[i] * 0.01;
      dys[i] -= y[i] * 0.01;
    }
    const t = t0 * (1 - it / iterations);
    for (let i = 0; i < n; i++) {
      const d = Math.sqrt(dxs[i] * dxs[i] + dys[i] * dys[i]);
      if (d === 0) continue;
      const step = Math.min(d, t);
      x[i] += (dxs[i] / d) * step;
      y[i] += (dys[i] / d) * step;
    }
  }
  return new Map(ids.map((id, i) => [id, { x: Math.round(x[i] * 10) / 10, y: Math.round(y[i] * 10) / 10 }] as const));
}

export interface WrapOptions extends LayoutOptions {
  /** The panel the whole should fit, in px (default 1100 × 640, a typical investigator panel). */
  panel?: { w: number; h: number };
  /** Space between two rows, in multiples of dy (default 1.5). */
  rowGap?: number;
}

/**
 * The layered layout with its layers wrapped into rows, as text wraps: row r holds layers
 * r·k … r·k + k − 1, left to right, and rows stack top to bottom. A traced lineage in a big run is
 * a long chain (200 layers of one or two nodes): laid out in one row it is 40,000 px wide and a
 * node high, and fitted to a panel its nodes are a few pixels. k is chosen so that the whole,
 * fitted to the panel, draws its nodes largest, up to their own size (ties: fewer rows). Every row
 * reads left to right like the rest of the graph (a snake, turning back every other row, would
 * make the wrap edges short but half the rows read against time); an edge that wraps goes from
 * the end of one row to the start of the next. Cost: the layered layout's, plus O(L²) for L layers.
 */
export function wrappedLayout(nodes: readonly LayoutNode[], edges: readonly LayoutEdge[], opts: WrapOptions = {}): Layout & { perRow: number } {
  const dx = opts.dx ?? 180;
  const dy = opts.dy ?? 60;
  const panel = opts.panel ?? { w: 1100, h: 640 };
  const gap = (opts.rowGap ?? 1.5) * dy;
  const base = layeredLayout(nodes, edges, { pullSources: true, ...opts });
  const sizes = base.layers.map((l) => l.length);
  const L = sizes.length;
  /** Each row's height (its tallest layer's span) for k layers a row. */
  const rowHeights = (k: number): number[] => {
    const out: number[] = [];
    for (let s = 0; s < L; s += k) {
      let m = 1;
      for (let l = s; l < Math.min(L, s + k); l++) m = Math.max(m, sizes[l]);
      out.push((m - 1) * dy);
    }
    return out;
  };
  let best = { k: Math.max(1, L), zoom: -Infinity };
  for (let k = L; k >= 1; k--) {
    const rows = rowHeights(k);
    // the extents fitted, with a layer's width and a node's height of margin around them
    const w = (Math.min(k, L) - 1) * dx + dx;
    const h = rows.reduce((a, b) => a + b, 0) + (rows.length - 1) * gap + dy;
    // past the nodes' own size (zoom 1) nothing is gained: the fewest rows that reach it win
    const zoom = Math.min(1, panel.w / w, panel.h / h);
    if (zoom > best.zoom * (1 + 1e-9)) best = { k, zoom };
  }
  const k = best.k;
  const positions = new Map<string, { x: number; y: number }>();
  let top = 0;
  rowHeights(k).forEach((height, r) => {
    for (let l = r * k; l < Math.min(L, r * k + k); l++) {
      for (const id of base.layers[l]) {
        const p = base.positions.get(id)!;
        // y: centred on the row's axis, as the unwrapped layout centres each layer
        positions.set(id, { x: (l - r * k) * dx, y: top + height / 2 + p.y });
      }
    }
    top += height + gap;
  });
  return { positions, layers: base.layers, perRow: k };
}
