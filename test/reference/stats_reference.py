#!/usr/bin/env python3
"""Independent reference for core/stats/ (normal, intervals, exact-tests, corrections and
verdicts), using only Python 3's standard library.

Writes test/unit/fixtures/stats-reference.json (deterministic, keys sorted),
which test/unit/stats.test.ts checks the TypeScript implementation against.

    python3 test/reference/stats_reference.py

The implementations here deliberately take a different route from the
TypeScript ones: the normal quantile is statistics.NormalDist().inv_cdf
(Wichura's AS 241), the normal CDF is 0.5 * math.erfc(-x / sqrt 2) (libm), the
McNemar p-value is an exact rational sum with math.comb and fractions.Fraction,
Wilson/Newcombe are the textbook formulas, and Benjamini-Hochberg decides
rejections with exact decimal comparisons.
"""

from __future__ import annotations

import json
import math
import random
from fractions import Fraction
from pathlib import Path
from statistics import NormalDist

STD = NormalDist()
Z95 = 1.959963984540054


# --- reference implementations ----------------------------------------------

def z_for(k: float, alpha: float = 0.05) -> float:
    """Bonferroni two-sided critical value: inv_cdf(1 - alpha / (2k))."""
    return STD.inv_cdf(1 - alpha / (2 * k))


def wilson(k: int, n: int, z: float = Z95) -> tuple[float, float]:
    """Textbook Wilson score interval, clamped to [0, 1]; n = 0 -> (0, 1)."""
    if n == 0:
        return (0.0, 1.0)
    p = k / n
    denom = 1 + z * z / n
    center = (p + z * z / (2 * n)) / denom
    half = z / denom * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return (max(0.0, center - half), min(1.0, center + half))


def newcombe(k1: int, n1: int, k2: int, n2: int, z: float = Z95) -> tuple[float, float]:
    """Newcombe (1998) method 10 for p1 - p2; empty arms count as p = 0 with Wilson [0, 1]."""
    p1 = k1 / n1 if n1 else 0.0
    p2 = k2 / n2 if n2 else 0.0
    l1, u1 = wilson(k1, n1, z)
    l2, u2 = wilson(k2, n2, z)
    d = p1 - p2
    lo = d - math.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2)
    hi = d + math.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2)
    return (lo, hi)


def mcnemar_exact(b: int, c: int) -> float:
    """Exact two-sided McNemar p-value, summed in exact rational arithmetic."""
    n = b + c
    if n == 0:
        return 1.0
    m = min(b, c)
    tail = Fraction(sum(math.comb(n, i) for i in range(m + 1)), 2 ** n)
    return float(min(Fraction(1), 2 * tail))


def normal_cdf(x: float) -> float:
    """Phi(x) via libm's erfc. (NormalDist().cdf uses 1 + erf, which loses the lower tail.)"""
    return 0.5 * math.erfc(-x / math.sqrt(2))


def benjamini_hochberg(pvals: list[float], q: float = 0.05) -> tuple[list[bool], list[float]]:
    """Step-up BH. Rejections compare p_(i) <= i q / m exactly, reading each float as the
    shortest decimal that round-trips to it (so 0.04 <= 4 * 0.06 / 6 holds, as written)."""
    m = len(pvals)
    order = sorted(range(m), key=lambda i: pvals[i])  # stable for ties
    fq = Fraction(repr(q))
    cutoff = 0
    for rank in range(1, m + 1):
        if Fraction(repr(pvals[order[rank - 1]])) <= rank * fq / m:
            cutoff = rank
    rejected = [False] * m
    adjusted = [1.0] * m
    running = Fraction(1)
    for rank in range(m, 0, -1):
        i = order[rank - 1]
        running = min(running, Fraction(pvals[i]) * m / rank)
        adjusted[i] = float(running)
        rejected[i] = rank <= cutoff
    return rejected, adjusted


# --- grid ---------------------------------------------------------------------

def build() -> dict:
    z_grid = [("Z95", Z95), ("zFor(2)", z_for(2)), ("zFor(3)", z_for(3)), ("zFor(20)", z_for(20))]

    wilson_groups = []
    for label, z in z_grid:
        for n in [0, 1, 2, 5, 10, 20, 40, 80, 160, 1000]:
            rows = [[k, *wilson(k, n, z)] for k in range(n + 1)]
            wilson_groups.append({"label": label, "n": n, "z": z, "rows": rows})

    def ks(n: int) -> list[int]:
        return sorted({v for v in (0, 1, 2, n // 4, n // 2, (3 * n) // 4, n - 1, n) if 0 <= v <= n})

    newcombe_groups = []
    for label, z, ns in [
        ("Z95", Z95, [0, 1, 2, 5, 10, 40, 80, 1000]),
        ("zFor(3)", z_for(3), [0, 1, 7, 40, 160]),
        ("zFor(20)", z_for(20), [0, 3, 40, 160]),
    ]:
        rows = []
        for n1 in ns:
            for n2 in ns:
                for k1 in ks(n1):
                    for k2 in ks(n2):
                        rows.append([k1, n1, k2, n2, *newcombe(k1, n1, k2, n2, z)])
        newcombe_groups.append({"label": label, "z": z, "rows": rows})

    mcnemar_rows = [[b, c, mcnemar_exact(b, c)] for b in range(41) for c in range(41)]
    for b, c in [(300, 350), (350, 300), (0, 1000), (1000, 0), (1000, 1000), (940, 1060), (900, 1100),
                 (1, 1999), (0, 2000), (870, 1130), (480, 520), (1500, 2500), (1999, 2001), (5, 3995), (2000, 2000)]:
        mcnemar_rows.append([b, c, mcnemar_exact(b, c)])

    zfor_rows = [[k, 0.05, z_for(k)] for k in range(1, 65)]
    zfor_rows += [[k, a, z_for(k, a)] for a in (0.01, 0.1, 0.2) for k in (1, 2, 5, 64)]

    cdf_xs = [-37.5, -30, -20, -12, -8.25, -6, -5, -4, -3.5, -3, -2.5, -1.959963984540054, -1.5, -1,
              -0.75, -0.5, -0.46875, -0.3, -0.1, -1e-9, 0, 1e-9, 0.1, 0.3, 0.46875, 0.5, 0.75, 1, 1.5,
              1.959963984540054, 2.5, 3, 3.5, 4, 5, 6, 8.25, 12]
    cdf_xs += [i / 8 for i in range(-64, 65)]
    cdf_xs = sorted(set(cdf_xs))
    cdf_rows = [[x, normal_cdf(x)] for x in cdf_xs]

    qs = [1e-300, 1e-200, 1e-100, 1e-50, 1e-20, 1e-12, 1e-9, 1e-6, 1e-4, 0.001, 0.0125, 0.02425, 0.025, 0.05,
          0.1, 0.2, 0.3, 0.4, 0.45, 0.499999, 0.5, 0.500001, 0.55, 0.6, 0.7, 0.8, 0.9, 0.95, 0.975, 0.97575,
          0.99, 0.999, 0.9999, 1 - 1e-6, 1 - 1e-9, 1 - 1e-12]
    qs += [i / 100 for i in range(1, 100)]
    quantile_rows = [[p, STD.inv_cdf(p)] for p in sorted(set(qs))]

    rng = random.Random(20240611)
    bh_vectors = [
        ([], 0.05),
        ([0.5], 0.05),
        ([0.01], 0.05),
        ([1.0, 1.0, 1.0], 0.05),
        ([0.0, 0.0, 1.0], 0.05),
        ([0.01, 0.01, 0.04, 0.04], 0.05),
        ([0.04, 0.01, 0.04, 0.01], 0.05),
        ([0.001, 0.008, 0.039, 0.041, 0.042, 0.06, 0.074, 0.205, 0.212, 0.216], 0.05),
        ([0.8, 0.02, 0.03, 0.2, 0.0001, 0.045, 0.5, 0.049], 0.05),
        ([0.03, 0.03, 0.03, 0.03], 0.05),
        ([0.03, 0.03, 0.03, 0.03], 0.1),
        ([0.2, 0.3, 0.1, 0.4], 0.5),
        ([0.0625, 0.0625, 0.5, 1.0, 0.001953125], 0.2),
        ([0.01, 0.02, 0.03, 0.04, 0.05], 0.05),
        ([0.05, 0.04, 0.03, 0.02, 0.01, 0.9], 0.06),
    ]
    for size in (5, 20, 100):
        bh_vectors.append(([round(rng.random() ** 3, 6) for _ in range(size)], 0.05))
        bh_vectors.append(([round(rng.random() ** 2, 4) for _ in range(size)], 0.1))
    bh_rows = []
    for pvals, q in bh_vectors:
        rejected, adjusted = benjamini_hochberg(pvals, q)
        bh_rows.append({"adjusted": adjusted, "p": pvals, "q": q, "rejected": rejected})

    return {
        "meta": {
            "generator": "test/reference/stats_reference.py",
            "note": "Expected values from an independent Python standard-library implementation; regenerate with python3.",
            "Z95": Z95,
        },
        "benjaminiHochberg": bh_rows,
        "mcnemarExact": {"fields": ["b", "c", "p"], "rows": mcnemar_rows},
        "newcombe": {"fields": ["kWith", "nWith", "kWithout", "nWithout", "lo", "hi"], "groups": newcombe_groups},
        "normalCdf": {"fields": ["x", "cdf"], "rows": cdf_rows},
        "normalQuantile": {"fields": ["p", "x"], "rows": quantile_rows},
        "wilson": {"fields": ["k", "lo", "hi"], "groups": wilson_groups},
        "zFor": {"fields": ["k", "alpha", "z"], "rows": zfor_rows},
    }


# --- deterministic, compact JSON -----------------------------------------------

def dump(value, indent: int = 0) -> str:
    """JSON with sorted keys; lists of scalars (table rows) stay on one line."""
    pad = "  " * indent
    inner = "  " * (indent + 1)
    if isinstance(value, dict):
        if not value:
            return "{}"
        items = [f"{inner}{json.dumps(k)}: {dump(value[k], indent + 1)}" for k in sorted(value)]
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    if isinstance(value, list):
        if all(not isinstance(v, (dict, list)) for v in value):
            return json.dumps(value, allow_nan=False)
        return "[\n" + ",\n".join(inner + dump(v, indent + 1) for v in value) + "\n" + pad + "]"
    return json.dumps(value, allow_nan=False)


def main() -> None:
    out = Path(__file__).resolve().parent.parent / "unit" / "fixtures" / "stats-reference.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(dump(build()) + "\n", encoding="utf-8")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
