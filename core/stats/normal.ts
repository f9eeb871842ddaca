/**
 * The standard normal distribution: its CDF and its inverse, to close to machine precision, and the
 * two-sided 95% critical value. The intervals and corrections of core/stats build on these.
 *
 * @module
 */

/** Two-sided 95% standard-normal critical value, Φ⁻¹(0.975). */
export const Z95 = 1.959963984540054;

const SQRT2 = Math.SQRT2;
const SQRT_2PI = 2.5066282746310002; // √(2π)
const ONE_OVER_SQRT_PI = 0.5641895835477563; // 1/√π

// W. J. Cody, "Rational Chebyshev approximations for the error function",
// Math. Comp. 23 (1969) 631–638; coefficients as in netlib specfun CALERF.
const ERF_A = [3.1611237438705656, 113.864154151050156, 377.485237685302021, 3209.37758913846947, 0.185777706184603153];
const ERF_B = [23.6012909523441209, 244.024637934444173, 1282.61652607737228, 2844.23683343917062];
const ERFC_C = [
  0.564188496988670089, 8.88314979438837594, 66.1191906371416295, 298.635138197400131, 881.95222124176909, 1712.04761263407058, 2051.07837782607147,
  1230.33935479799725, 2.15311535474403846e-8,
];
const ERFC_D = [
  15.7449261107098347, 117.693950891312499, 537.181101862009858, 1621.38957456669019, 3290.79923573345963, 4362.61909014324716, 3439.36767414372164,
  1230.33935480374942,
];
const ERFC_P = [0.305326634961232344, 0.360344899949804439, 0.125781726111229246, 0.0160837851487422766, 6.58749161529837803e-4, 0.0163153871373020978];
const ERFC_Q = [2.56852019228982242, 1.87295284992346047, 0.527905102951428412, 0.0605183413124413191, 0.00233520497626869185];

/** exp(−y²), computed as exp(−t²)·exp(−(y−t)(y+t)) with t = y rounded down to 1/16 to limit error growth. */
function expNegSquare(y: number): number {
  const t = Math.trunc(y * 16) / 16;
  return Math.exp(-t * t) * Math.exp(-(y - t) * (y + t));
}

/** Complementary error function, relative accuracy close to machine precision (Cody 1969). */
function erfc(x: number): number {
  if (Number.isNaN(x)) return NaN;
  const y = Math.abs(x);
  if (y <= 0.46875) {
    const z = y * y;
    let num = ERF_A[4] * z;
    let den = z;
    for (let i = 0; i < 3; i++) {
      num = (num + ERF_A[i]) * z;
      den = (den + ERF_B[i]) * z;
    }
    return 1 - (x * (num + ERF_A[3])) / (den + ERF_B[3]);
  }
  let r: number;
  if (y <= 4) {
    let num = ERFC_C[8] * y;
    let den = y;
    for (let i = 0; i < 7; i++) {
      num = (num + ERFC_C[i]) * y;
      den = (den + ERFC_D[i]) * y;
    }
    r = ((num + ERFC_C[7]) / (den + ERFC_D[7])) * expNegSquare(y);
  } else if (y >= 26.543) {
    r = 0;
  } else {
    const z = 1 / (y * y);
    let num = ERFC_P[5] * z;
    let den = z;
    for (let i = 0; i < 4; i++) {
      num = (num + ERFC_P[i]) * z;
      den = (den + ERFC_Q[i]) * z;
    }
    const s = (z * (num + ERFC_P[4])) / (den + ERFC_Q[4]);
    r = ((ONE_OVER_SQRT_PI - s) / y) * expNegSquare(y);
  }
  return x < 0 ? 2 - r : r;
}

/**
 * Standard normal cumulative distribution function Φ(x) = P(Z ≤ x).
 *
 * Computed as `erfc(−x/√2) / 2` with W. J. Cody's rational approximations,
 * so both tails keep close to full relative precision.
 *
 * @param x - Any real number (±Infinity allowed).
 * @returns Φ(x) in [0, 1]; NaN for NaN.
 */
export function normalCdf(x: number): number {
  return 0.5 * erfc(-x / SQRT2);
}

// Acklam's rational approximation to Φ⁻¹ (relative error ≈ 1.15e-9), refined below.
const ACK_A = [-39.69683028665376, 220.9460984245205, -275.9285104469687, 138.357751867269, -30.66479806614716, 2.506628277459239];
const ACK_B = [-54.47609879822406, 161.5858368580409, -155.6989798598866, 66.80131188771972, -13.28068155288572];
const ACK_C = [-0.007784894002430293, -0.3223964580411365, -2.400758277161838, -2.549732539343734, 4.374664141464968, 2.938163982698783];
const ACK_D = [0.007784695709041462, 0.3224671290700398, 2.445134137142996, 3.754408661907416];
const ACK_P_LOW = 0.02425;

/** Acklam's initial approximation for 0 < p ≤ 0.5. */
function acklamLower(p: number): number {
  const [a0, a1, a2, a3, a4, a5] = ACK_A as [number, number, number, number, number, number];
  const [b0, b1, b2, b3, b4] = ACK_B as [number, number, number, number, number];
  const [c0, c1, c2, c3, c4, c5] = ACK_C as [number, number, number, number, number, number];
  const [d0, d1, d2, d3] = ACK_D as [number, number, number, number];
  if (p < ACK_P_LOW) {
    const q = Math.sqrt(-2 * Math.log(p));
    return (((((c0 * q + c1) * q + c2) * q + c3) * q + c4) * q + c5) / ((((d0 * q + d1) * q + d2) * q + d3) * q + 1);
  }
  const q = p - 0.5;
  const r = q * q;
  return ((((((a0 * r + a1) * r + a2) * r + a3) * r + a4) * r + a5) * q) / (((((b0 * r + b1) * r + b2) * r + b3) * r + b4) * r + 1);
}

/**
 * Inverse of the standard normal CDF: the x with Φ(x) = p.
 *
 * Acklam's rational approximation refined by Halley steps against
 * {@link normalCdf}; the result is accurate to about 1e-15 relative in the
 * body and to roughly 1e-13 absolute even in the far tails. The lower tail is
 * always the one solved (Φ⁻¹(p) = −Φ⁻¹(1 − p) for p > 0.5, where `1 − p` is
 * exact), so no precision is lost near p = 1 beyond what `p` itself carries.
 *
 * @param p - Probability in [0, 1].
 * @returns Φ⁻¹(p); −Infinity for 0, +Infinity for 1, NaN outside [0, 1] or for NaN.
 */
export function normalQuantile(p: number): number {
  if (Number.isNaN(p) || p < 0 || p > 1) return NaN;
  if (p === 0) return -Infinity;
  if (p === 1) return Infinity;
  if (p === 0.5) return 0;
  if (p > 0.5) return -lowerQuantile(1 - p);
  return lowerQuantile(p);
}

/** Φ⁻¹(p) for 0 < p < 0.5 (result ≤ 0), refined by Halley's method. */
function lowerQuantile(p: number): number {
  let x = acklamLower(p);
  for (let i = 0; i < 4; i++) {
    const e = normalCdf(x) - p;
    // u = e / φ(x); φ(x) underflows only for p below ~1e-300, where the
    // initial approximation is already as good as the arithmetic allows.
    const u = e * SQRT_2PI * Math.exp((x * x) / 2);
    if (!Number.isFinite(u)) break;
    const step = u / (1 + (x * u) / 2);
    x -= step;
    if (Math.abs(step) <= 1e-15 * Math.max(1, Math.abs(x))) break;
  }
  return x;
}
