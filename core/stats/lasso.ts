/**
 * L1-regularised least squares (the LASSO) by cyclic coordinate descent, small and dependency-free:
 * minimise  (1 / 2m) · Σ_i (y_i − b − x_i·β)²  +  λ · Σ_j |β_j|  over the intercept b and β.
 *
 * Used to predict which blocks of a model call matter from a few calls with random blocks removed
 * (ContextCite's surrogate): x_ij = 1 when block j was kept in call i, y_i the target's hit. A fit
 * is a prediction to order suspects, never a test.
 */

export interface LassoFit {
  intercept: number;
  beta: number[];
  /** Coordinate-descent sweeps made. */
  sweeps: number;
}

const soft = (z: number, g: number) => (z > g ? z - g : z < -g ? z + g : 0);

/**
 * Fits y ≈ b + X·β with an L1 penalty `lambda` (≥ 0). Columns are used as given (not rescaled);
 * a constant column gets β = 0. Stops when no coefficient moves by more than `tol` in a sweep.
 */
export function lasso(X: readonly (readonly number[])[], y: readonly number[], lambda: number, opts: { maxSweeps?: number; tol?: number } = {}): LassoFit {
  const m = X.length;
  if (m === 0) throw new Error("lasso: no rows");
  if (y.length !== m) throw new Error(`lasso: ${m} rows but ${y.length} targets`);
  const p = X[0].length;
  if (X.some((r) => r.length !== p)) throw new Error("lasso: rows of different lengths");
  if (!(lambda >= 0)) throw new Error("lasso: lambda must be ≥ 0");
  const maxSweeps = opts.maxSweeps ?? 1000;
  const tol = opts.tol ?? 1e-7;
  // centre the columns and y: the intercept then falls out
  const mean = Array.from({ length: p }, (_, j) => X.reduce((s, r) => s + r[j], 0) / m);
  const ym = y.reduce((s, v) => s + v, 0) / m;
  const Xc = X.map((r) => r.map((v, j) => v - mean[j]));
  const norm = Array.from({ length: p }, (_, j) => Xc.reduce((s, r) => s + r[j] * r[j], 0) / m);
  const beta = new Array<number>(p).fill(0);
  const resid = y.map((v) => v - ym);
  let sweeps = 0;
  for (; sweeps < maxSweeps; sweeps++) {
    let moved = 0;
    for (let j = 0; j < p; j++) {
      if (norm[j] === 0) continue;
      let rho = 0;
      for (let i = 0; i < m; i++) rho += Xc[i][j] * resid[i];
      rho = rho / m + norm[j] * beta[j];
      const next = soft(rho, lambda) / norm[j];
      const d = next - beta[j];
      if (d !== 0) {
        for (let i = 0; i < m; i++) resid[i] -= Xc[i][j] * d;
        beta[j] = next;
        moved = Math.max(moved, Math.abs(d));
      }
    }
    if (moved <= tol) {
      sweeps++;
      break;
    }
  }
  const intercept = ym - beta.reduce((s, b, j) => s + b * mean[j], 0);
  return { intercept, beta, sweeps };
}

/** The smallest lambda at which every coefficient is 0: max_j |x̃_j · ỹ| / m. */
export function lambdaMax(X: readonly (readonly number[])[], y: readonly number[]): number {
  const m = X.length;
  const p = X[0]?.length ?? 0;
  const ym = y.reduce((s, v) => s + v, 0) / m;
  let best = 0;
  for (let j = 0; j < p; j++) {
    const mj = X.reduce((s, r) => s + r[j], 0) / m;
    let g = 0;
    for (let i = 0; i < m; i++) g += (X[i][j] - mj) * (y[i] - ym);
    best = Math.max(best, Math.abs(g) / m);
  }
  return best;
}
