"""Appendix A of paper A (and the moments that Appendix B borrows from it), checked.

Each ``*_table`` function returns a :class:`pandas.DataFrame` whose numbers are
rounded to a fixed number of significant digits (so that stored notebook outputs
do not depend on the last bits of a float), and :func:`claims` turns the tables
into ledger entries whose verdicts follow from the numbers.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy import stats

from ..ledger import Claim, check_bound, check_close, check_estimate
from ..numbers import DISPLAY_DIGITS, quoted_numbers, rounded_frame
from ..scale import Scale
from ..theory import moments
from ..theory.montecarlo import Estimate, batch_estimate, mc_mean, rng_for

KEY = "aa_moments"  # the chapter's one name: book page, notebook, ledger file, tests
# Stream ids for rng_for, one per table, so that tables do not share random numbers.
_RAW, _VG, _ABS, _LAW, _EQ35 = 1, 2, 3, 4, 5


def raw_moment_table(ks: list[float], orders: list[int], scale: Scale) -> pd.DataFrame:
    """E[X^n], X ~ chi^2_k: eq. 26 (product), eq. 28 (gamma form), scipy, quadrature of the density, Monte Carlo."""
    rows = []
    for k in ks:
        for n in orders:
            est = mc_mean(
                lambda rng, size, k=k, n=n: rng.chisquare(k, size) ** n,
                scale.mc_draws,
                rng_for(scale.seed, _RAW, int(k * 1000), n),
                scale.mc_chunk,
            )
            eq26 = moments.chi2_raw_moment(k, n)
            rows.append(
                {
                    "k": k,
                    "order": n,
                    "eq26": eq26,
                    "eq28": moments.chi2_raw_moment_gamma(k, n),
                    "scipy": float(stats.chi2(k).moment(n)),
                    "quadrature": moments.chi2_raw_moment_quadrature(k, n),
                    "mc": est.mean,
                    "mc_stderr": est.stderr,
                    "z": est.z_score(eq26),
                    "draws": est.n,
                }
            )
    return rounded_frame(pd.DataFrame(rows))


def chi2_difference_table(ks: list[float], orders: list[float], scale: Scale) -> pd.DataFrame:
    """E|nu1 - nu2|^p, nu_i ~ chi^2_k: Gaunt's formula, quadrature of the VG density, Monte Carlo.

    For k = 1 the table also gives the identity nu1 - nu2 = 2ab (eq. 36) through
    scipy's half-normal moments.
    """
    rows = []
    for k in ks:
        nu, alpha = moments.chi2_difference_vg_params(k)
        for p in orders:
            est = mc_mean(
                lambda rng, size, k=k, p=p: np.abs(rng.chisquare(k, size) - rng.chisquare(k, size)) ** p,
                scale.mc_draws,
                rng_for(scale.seed, _VG, int(k * 1000), int(p * 1000)),
                scale.mc_chunk,
            )
            formula = moments.vg_abs_moment(p, nu, alpha)
            rows.append(
                {
                    "k": k,
                    "order": p,
                    "vg_nu": nu,
                    "gaunt": formula,
                    "quadrature": moments.vg_abs_moment_quadrature(p, nu, alpha),
                    "normal_product": moments.normal_product_abs_moment(int(p))
                    if k == 1 and float(p).is_integer() and p >= 1
                    else math.nan,
                    "mc": est.mean,
                    "mc_stderr": est.stderr,
                    "z": est.z_score(formula),
                    "draws": est.n,
                }
            )
    return rounded_frame(pd.DataFrame(rows))


def chi2_abs_central_table(rs: list[int], scale: Scale) -> pd.DataFrame:
    """E|X - r|^3 for X ~ chi^2_r by quadrature and Monte Carlo, against the 8r that eq. 44 puts in its place."""
    rows = []
    for r in rs:
        exact = moments.chi2_central_abs_moment(r, 3)
        est = mc_mean(
            lambda rng, size, r=r: np.abs(rng.chisquare(r, size) - r) ** 3,
            scale.mc_draws,
            rng_for(scale.seed, _ABS, r),
            scale.mc_chunk,
        )
        lower = moments.chi2_third_central_moment(r)
        rows.append(
            {
                "r": r,
                "quadrature": exact,
                "mc": est.mean,
                "mc_stderr": est.stderr,
                "z": est.z_score(exact),
                "eq44_value_8r": lower,
                "ratio_to_8r": exact / lower,
                "draws": est.n,
            }
        )
    return rounded_frame(pd.DataFrame(rows))


def chi2_law_table(ks: list[int], scale: Scale) -> pd.DataFrame:
    """Theorem A.1's content: sums of k squared standard normals against chi^2_k (Kolmogorov-Smirnov test),
    with their mean and variance and error bars."""
    rows = []
    for k in ks:
        rng = rng_for(scale.seed, _LAW, k)
        x = np.sum(rng.standard_normal((scale.noise_draws, k)) ** 2, axis=1)
        var = batch_estimate(x, lambda v: float(np.var(v, ddof=1)))
        rows.append(
            {
                "k": k,
                "draws": x.size,
                "ks_p_value": float(stats.kstest(x, stats.chi2(k).cdf).pvalue),
                "mean": float(x.mean()),
                "mean_se": float(x.std(ddof=1) / math.sqrt(x.size)),
                "var": var.mean,
                "var_se": var.stderr,
            }
        )
    return rounded_frame(pd.DataFrame(rows))


def eq35_table(scale: Scale, bins: int = 8) -> pd.DataFrame:
    """Eq. 35: for independent standard normals a, b, are s = (a + b)/sqrt(2) and d = (a - b)/sqrt(2)
    independent?  Correlations of s and d and of their squares (with batch-means error bars), a chi-square
    test of independence on a bins x bins table of their quantiles, and the identity 2ab = s^2 - d^2."""
    rng = rng_for(scale.seed, _EQ35)
    a, b = rng.standard_normal((2, scale.noise_draws))
    s, d = (a + b) / math.sqrt(2), (a - b) / math.sqrt(2)
    pairs = np.stack([s, d], axis=1)
    corr = batch_estimate(pairs, lambda v: float(np.corrcoef(v[:, 0], v[:, 1])[0, 1]))
    corr_sq = batch_estimate(pairs, lambda v: float(np.corrcoef(v[:, 0] ** 2, v[:, 1] ** 2)[0, 1]))
    edges = stats.norm.ppf(np.linspace(0, 1, bins + 1)[1:-1])  # equal-probability cells of N(0, 1)
    counts = np.zeros((bins, bins), dtype=np.int64)
    np.add.at(counts, (np.searchsorted(edges, s), np.searchsorted(edges, d)), 1)
    chi2 = stats.chi2_contingency(counts)
    return rounded_frame(
        pd.DataFrame(
            [
                {
                    "draws": s.size,
                    "corr_s_d": corr.mean,
                    "corr_s_d_se": corr.stderr,
                    "corr_squares": corr_sq.mean,
                    "corr_squares_se": corr_sq.stderr,
                    "independence_p_value": float(chi2.pvalue),
                    # a bool, not the error itself: rounding errors near 1e-15 differ between machines
                    "identity_within_1e-12": bool(np.max(np.abs(2 * a * b - (s**2 - d**2))) < 1e-12),
                }
            ]
        )
    )


def _mc_check(name: str, row: pd.Series, reference: float, role: str = "core"):
    return check_estimate(
        name, Estimate(float(row["mc"]), float(row["mc_stderr"]), int(row["draws"])), reference, role=role
    )


def claims(
    raw: pd.DataFrame,
    diff: pd.DataFrame,
    absc: pd.DataFrame,
    law: pd.DataFrame,
    scale: Scale,
    approx_rtol: float = 0.10,
    eq35: pd.DataFrame | None = None,
) -> list[Claim]:
    """Ledger entries for Appendix A and the moments used in Appendix B's proof of Lemma 4.2.

    ``approx_rtol`` is how close E|X - r|^3 must be to 8r for eq. 44's
    approximation to count as accurate.
    """
    out = []

    checks = []
    for _, row in raw.iterrows():
        k, n = row["k"], int(row["order"])
        checks.append(
            check_close(
                f"eq26 vs scipy's closed form, k={k:g}, n={n}", row["eq26"], row["scipy"], rtol=1e-4, role="identity"
            )
        )
        checks.append(
            check_close(f"eq26 vs quadrature of the density, k={k:g}, n={n}", row["eq26"], row["quadrature"], rtol=1e-4)
        )
        checks.append(
            check_close(f"eq26 vs eq28, k={k:g}, n={n}", row["eq26"], row["eq28"], rtol=1e-4, role="identity")
        )
        checks.append(_mc_check(f"Monte Carlo, k={k:g}, n={n}", row, row["eq26"]))
    zmax = float(raw["z"].abs().max())
    out.append(
        Claim(
            claim_id="A-A.2",
            scale=scale.name,
            checks=checks,
            summary=f"{len(raw)} (k, n) pairs; largest relative gap to numerical integration of the density "
            f"{float((raw['eq26'] / raw['quadrature'] - 1).abs().max()):.1g} (values rounded to {DISPLAY_DIGITS} "
            f"significant digits); Monte Carlo agrees (largest |z| = {zmax:.2f}); scipy's closed form and eq. 28 are "
            "the same algebra, shown as identities",
        )
    )

    checks = []
    for r in law.itertuples():
        checks.append(
            check_bound(f"sum of {r.k} squared normals ~ chi^2_{r.k}: KS p-value", r.ks_p_value, 1e-3, direction=">=")
        )
        checks.append(check_estimate(f"its mean = k, k={r.k}", Estimate(r.mean, r.mean_se, int(r.draws)), r.k))
        checks.append(check_estimate(f"its variance = 2k, k={r.k}", Estimate(r.var, r.var_se, int(r.draws)), 2 * r.k))
    for _, row in raw[raw["order"] == 2].iterrows():
        k = row["k"]
        checks.append(check_close(f"Var from eq. 26, k={k:g}", row["eq26"] - k * k, 2 * k, rtol=1e-4, role="identity"))
        checks.append(
            check_close(f"scipy variance, k={k:g}", float(stats.chi2(k).var()), 2 * k, rtol=1e-12, role="identity")
        )
    for _, row in raw[raw["order"] == 1].iterrows():
        checks.append(_mc_check(f"numpy's chi-square sampler: mean, k={row['k']:g}", row, row["k"], "instrument"))
    out.append(
        Claim(
            claim_id="A-A.1",
            scale=scale.name,
            checks=checks,
            summary=f"sums of k squared normals pass a KS test against chi^2_k (smallest p-value "
            f"{law['ks_p_value'].min():.3g}) with mean k and variance 2k, for k in {sorted(set(law['k']))}",
        )
    )

    if eq35 is not None:
        e = eq35.iloc[0]
        n = int(e["draws"])
        checks = [
            check_estimate("corr(a + b, a - b) = 0", Estimate(e["corr_s_d"], e["corr_s_d_se"], n), 0.0),
            check_estimate("corr((a + b)^2, (a - b)^2) = 0", Estimate(e["corr_squares"], e["corr_squares_se"], n), 0.0),
            check_bound(
                "chi-square test of independence on an 8 x 8 table: p-value",
                e["independence_p_value"],
                1e-3,
                direction=">=",
            ),
            check_close(
                "2ab = ((a + b)^2 - (a - b)^2) / 2 within 1e-12",
                float(e["identity_within_1e-12"]),
                1.0,
                rtol=0.0,
                role="identity",
            ),
        ]
        out.append(
            Claim(
                claim_id="A-B.eq35",
                scale=scale.name,
                checks=checks,
                summary=f"over {n:,} pairs: corr(a + b, a - b) = {e['corr_s_d']:.4f} ± {e['corr_s_d_se']:.4f}, "
                f"corr of their squares {e['corr_squares']:.4f} ± {e['corr_squares_se']:.4f}, independence test "
                f"p-value {e['independence_p_value']:.3g}",
                note="a + b and a - b are jointly Gaussian and uncorrelated, hence independent, each N(0, 2); the "
                "Monte Carlo tests (correlations of the variables and of their squares, a test of independence) "
                "would catch a dependence that the Gaussian argument missed.",
            )
        )

    checks = []
    for _, row in diff[diff["order"] == 2].iterrows():
        k = row["k"]
        checks.append(check_close(f"E V^2 by Gaunt's formula, k={k:g}", row["gaunt"], 4 * k, rtol=1e-9))
        checks.append(check_close(f"E V^2 by VG density quadrature, k={k:g}", row["quadrature"], 4 * k, rtol=1e-4))
        checks.append(_mc_check(f"E V^2 Monte Carlo, k={k:g}", row, 4 * k))
        nu, alpha = moments.chi2_difference_vg_params(k)
        checks.append(
            check_close(
                f"VG density integrates to 1, k={k:g}",
                moments.vg_abs_moment_quadrature(0, nu, alpha),
                1.0,
                rtol=1e-6,
                role="instrument",
            )
        )
    out.append(
        Claim(
            claim_id="A-B.VG",
            scale=scale.name,
            checks=checks,
            summary="variance 4k confirmed by formula, density quadrature and Monte Carlo for k in "
            f"{sorted(set(diff['k']))}",
        )
    )

    checks = []
    row3 = diff[(diff["k"] == 1) & (diff["order"] == 3)].iloc[0]
    claimed = 2**6 / math.pi
    checks.append(check_close("Gaunt's formula", row3["gaunt"], claimed, rtol=1e-4))
    checks.append(check_close("quadrature of the VG(0, 1/2) density", row3["quadrature"], claimed, rtol=1e-4))
    checks.append(check_close("2^3 (E|a|^3)^2 via scipy half-normal", row3["normal_product"], claimed, rtol=1e-4))
    checks.append(_mc_check("Monte Carlo of |nu1 - nu2|^3", row3, claimed))
    out.append(
        Claim(
            claim_id="A-4.2-EV3",
            scale=scale.name,
            checks=checks,
            summary=f"2^6/pi = {claimed:.5g}; Monte Carlo {row3['mc']:.5g} ± {row3['mc_stderr']:.2g}",
        )
    )

    checks = []
    for _, row in absc.iterrows():
        r = int(row["r"])
        checks.append(check_bound(f"E|X-r|^3 >= 8r, r={r}", row["quadrature"], row["eq44_value_8r"], direction=">="))
        checks.append(_mc_check(f"quadrature vs Monte Carlo, r={r}", row, row["quadrature"], role="instrument"))
        checks.append(
            check_close(
                f"E|X-r|^3 close to 8r (eq. 44's approximation), r={r}",
                row["quadrature"],
                row["eq44_value_8r"],
                rtol=approx_rtol,
                role="caveat",
            )
        )
    lo, hi = absc.iloc[0], absc.iloc[-1]
    out.append(
        Claim(
            claim_id="A-4.2-eq44",
            scale=scale.name,
            checks=checks,
            note="The lower bound holds, but it is not an approximation: E|X - r|^3 grows like (2r)^(3/2) E|Z|^3, "
            "so replacing it by 8r underestimates the diagonal summand by a factor that grows like sqrt(r). "
            "Eq. 44 thus uses a lower bound inside an upper bound; for a uniform row the error, relative to the "
            "rest of the Lyapunov sum, is about 1.8 sqrt(r)/m.",
            summary=f"E|X-r|^3 / 8r = {lo['ratio_to_8r']:.3g} at r = {int(lo['r'])}, "
            f"{hi['ratio_to_8r']:.3g} at r = {int(hi['r'])}",
        )
    )
    return out


def key_numbers(diff: pd.DataFrame, absc: pd.DataFrame) -> dict[str, float]:
    """The numbers the chapter's takeaway quotes (glued by the notebook, rounded to 3 digits)."""
    row3 = diff[(diff["k"] == 1) & (diff["order"] == 3)].iloc[0]
    numbers = {
        "ev3_exact": row3["gaunt"],
        "ev3_mc": row3["mc"],
        "ev3_mc_se": row3["mc_stderr"],
        "eq44_ratio_first": absc["ratio_to_8r"].iloc[0],
        "eq44_ratio_last": absc["ratio_to_8r"].iloc[-1],
        "eq44_r_first": absc["r"].iloc[0],
        "eq44_r_last": absc["r"].iloc[-1],
    }
    return quoted_numbers(KEY, numbers)
