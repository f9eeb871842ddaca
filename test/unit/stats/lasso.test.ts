import { describe, expect, it } from "vitest";
import { lasso, lambdaMax } from "../../../core/stats/lasso";
import { PyRandom } from "../../../core/sdk/pyrandom";

describe("lasso (L1-regularised least squares)", () => {
  it("with no penalty it is least squares: recovers exact coefficients", () => {
    const X = [
      [1, 0],
      [0, 1],
      [1, 1],
      [0, 0],
      [1, 0],
      [0, 1],
    ];
    const y = X.map((r) => 0.5 + 2 * r[0] - 1 * r[1]);
    const f = lasso(X, y, 0);
    expect(f.intercept).toBeCloseTo(0.5, 5);
    expect(f.beta[0]).toBeCloseTo(2, 5);
    expect(f.beta[1]).toBeCloseTo(-1, 5);
  });

  it("finds the one block that matters among 32 from 48 random halves of 0/1 outcomes", () => {
    const rng = new PyRandom(7);
    const X: number[][] = [];
    const y: number[] = [];
    for (let i = 0; i < 48; i++) {
      const row = Array.from({ length: 32 }, () => (rng.random() < 0.5 ? 1 : 0));
      X.push(row);
      y.push(rng.random() < (row[13] ? 0.8 : 0.05) ? 1 : 0);
    }
    const f = lasso(X, y, 0.1 * lambdaMax(X, y));
    const order = f.beta.map((b, j) => [b, j]).sort((a, b) => b[0] - a[0]);
    expect(order[0][1]).toBe(13);
    expect(f.beta.filter((b) => b !== 0).length).toBeLessThan(32);
  });

  it("at lambdaMax every coefficient is 0; bad input is refused", () => {
    const X = [
      [1, 0],
      [0, 1],
      [1, 1],
    ];
    const y = [1, 0, 1];
    expect(lasso(X, y, lambdaMax(X, y)).beta.every((b) => Math.abs(b) < 1e-12)).toBe(true);
    expect(() => lasso([], [], 0)).toThrow(/no rows/);
    expect(() => lasso(X, [1], 0)).toThrow(/targets/);
    expect(() => lasso(X, y, -1)).toThrow(/lambda/);
  });
});
