"""Paper A, section 5 (Theorem 5.1, eqs. 22-23, §5.1), checked: tables and ledger claims.

Row scaling's cost is measured with the engine (``make bench``) and loaded from its committed
result, and so are §5.1's multiplier on real per-text gradients (``mia.multiplier``) and the canary audits of
full fine-tuning, LoRA, row-scaled LoRA and DP-SGD (``mia.audit``, ``make results-a5``).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..catalogue import regenerate
from ..ledger import Claim, check_bound, check_close, check_estimate
from ..mia.attacks.matching import UTILITY_MATCH  # row-scaled LoRA against DP-SGD at its multiplier
from ..numbers import ROUNDING_FLOOR, quoted_numbers, rounded_frame
from ..scale import Scale
from ..theory import projection
from ..theory.montecarlo import Estimate, rng_for

KEY = "a5_row_scaling"
PTB_MEMBERS = 42_068 // 3  # one third of Penn Treebank's training lines: the member set of paper A's protocol
PAPER_BATCH, PAPER_EPOCHS, DELTA_DP = 8, 20, 1e-5
_JL, _EQ23, _MULT = 1, 2, 3


def jl_table(deltas: list[float], ps: list[float], m: int, scale: Scale) -> pd.DataFrame:
    """Theorem 5.1 at r = ceil(Delta^-2 log(2/p)): exact one-sided probabilities against p/2, with Monte Carlo."""
    rows = []
    for delta in deltas:
        for p in ps:
            r = projection.jl_rank(delta, p)
            upper, lower = projection.jl_tails(delta, r)
            draws = scale.noise_draws
            mc_up, mc_lo = projection.jl_monte_carlo(
                m, r, delta, draws, rng_for(scale.seed, _JL, int(1e3 * delta), int(1e3 * p))
            )
            rows.append(
                {
                    "Delta": delta,
                    "p": p,
                    "r": r,
                    "upper": upper,
                    "lower": lower,
                    "p_half": p / 2,
                    "mc_upper": mc_up,
                    "mc_lower": mc_lo,
                    "draws": draws,
                }
            )
    return rounded_frame(pd.DataFrame(rows))


def eq23_table(n: int, batches: list[int], ranks: list[int], delta: float, scale: Scale, m: int = 64) -> pd.DataFrame:
    """Eq. 23's guarantee 1 - n b p (p implied by r and Delta) against the probabilities measured directly.

    The row ratios' law does not depend on the input dimension m (Theorem 5.1), so a small m suffices."""
    rows = []
    for r in ranks:
        p = 2 * math.exp(-r * delta**2)  # r = Delta^-2 log(2/p), solved for p
        for b in batches:
            for structure, draws in (
                ("independent", max(5, scale.attack_trials // 200)),
                ("rank1", scale.attack_trials // 4),
            ):
                rng = rng_for(scale.seed, _EQ23, r, b, len(structure))
                prob = projection.simultaneous_probabilities(n, b, r, m, delta, structure, draws, rng)
                rows.append(
                    {
                        "n": n,
                        "b": b,
                        "r": r,
                        "Delta": delta,
                        "p": p,
                        "guarantee_1_minus_nbp": 1 - n * b * p,
                        "structure": structure,
                        "all_rows_within": prob["all_rows"],
                        "frobenius_within": prob["frobenius"],
                        "draws": draws,
                    }
                )
    return rounded_frame(pd.DataFrame(rows))


def multiplier_table(
    b: int, n: int, m: int, ranks: list[int], delta: float, scale: Scale, repeats: int = 10, draws: int = 40
) -> pd.DataFrame:
    """LoRA's noise on the scaled batch, as a DP-SGD multiplier measured over A, against §5.1's formula, per batch
    geometry: ``repeats`` batches, each over ``draws`` matrices A; the plug-in of Lemma 3.1 beside it."""
    rows = []
    for r in ranks:
        for geometry in projection.GEOMETRIES:
            rng = rng_for(scale.seed, _MULT, r, len(geometry))
            z = [projection.equivalent_multiplier(geometry, b, n, m, r, delta, 1.0, rng, draws) for _ in range(repeats)]
            eq = np.array([v["z_equivalent"] for v in z])
            rows.append(
                {
                    "geometry": geometry,
                    "b": b,
                    "n": n,
                    "r": r,
                    "z_formula": z[0]["z_formula"],
                    "z_equivalent": float(eq.mean()),
                    "z_se": float(eq.std(ddof=1) / math.sqrt(repeats)),
                    "ratio": float(eq.mean() / z[0]["z_formula"]),
                    "ratio_plugin": float(np.mean([v["z_plugin"] for v in z]) / z[0]["z_formula"]),
                    "largest_norm_over_clip": max(v["largest_per_sample_norm"] for v in z),
                    "batches_x_draws": f"{repeats} x {draws}",
                }
            )
    # The cancelling geometry's noise is zero up to float rounding, whose digits vary between machines.
    return rounded_frame(pd.DataFrame(rows), floor=ROUNDING_FLOOR)


def needed_multiplier(epsilon: float, sample_rate: float, steps: int, delta: float = DELTA_DP) -> float:
    """A DP-SGD noise multiplier for which Opacus's RDP accountant certifies epsilon at delta (RDP is
    conservative: PRV and PLD certify a smaller epsilon at this multiplier)."""
    import warnings

    from opacus.accountants.utils import get_noise_multiplier

    # The search visits multipliers whose best Renyi order lies at the edge of Opacus's grid and warns for each;
    # the multiplier it returns is checked by the PRV and PLD accountants in accounting_table.
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Optimal order is the")
        return float(
            get_noise_multiplier(
                target_epsilon=epsilon, target_delta=delta, sample_rate=sample_rate, steps=steps, accountant="rdp"
            )
        )


def prv_epsilon(z: float, sample_rate: float, steps: int, delta: float = DELTA_DP) -> float:
    """epsilon of DP-SGD at multiplier z from Opacus's PRV accountant (its default)."""
    from opacus.accountants import PRVAccountant

    accountant = PRVAccountant()
    accountant.history = [(z, sample_rate, steps)]
    return float(accountant.get_epsilon(delta))


def rdp_epsilon(z: float, sample_rate: float, steps: int, delta: float = DELTA_DP) -> tuple[float, bool]:
    """epsilon of DP-SGD at multiplier z from Opacus's RDP accountant (an upper bound), and whether the best
    order lay at the edge of Opacus's grid (then the bound is loose: no order gives a useful one)."""
    import warnings

    from opacus.accountants import RDPAccountant

    accountant = RDPAccountant()
    accountant.history = [(z, sample_rate, steps)]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        eps = float(accountant.get_epsilon(delta))
    edge = any("Optimal order is the" in str(w.message) for w in caught)
    return eps, edge


PRV_EPS_ERROR, PRV_DELTA_ERROR_SHARE = 0.01, 1e-3  # Opacus's PRVAccountant.get_epsilon defaults (delta / 1000)


def prv_grid_points(z: float, sample_rate: float, steps: int, delta: float = DELTA_DP) -> int:
    """How many points Opacus's PRV accountant discretises DP-SGD's privacy loss on at multiplier z (its own
    domain rule at get_epsilon's default errors), found without allocating them: one float64 array of that
    length is a lower bound on the memory the accountant needs."""
    import warnings

    from opacus.accountants import PRVAccountant
    from opacus.accountants.analysis.prv import PoissonSubsampledGaussianPRV

    with warnings.catch_warnings():  # the domain's bound runs Opacus's RDP accountant, which warns at its grid's edge
        warnings.simplefilter("ignore", UserWarning)
        domain = PRVAccountant()._get_domain(
            [PoissonSubsampledGaussianPRV(sample_rate, z)],
            [steps],
            eps_error=PRV_EPS_ERROR,
            delta_error=delta * PRV_DELTA_ERROR_SHARE,
        )
    return int(domain.size)


def pld_epsilon(z: float, sample_rate: float, steps: int, delta: float = DELTA_DP) -> float:
    """The same epsilon from Google's dp-accounting PLD accountant (an independent implementation)."""
    import dp_accounting

    event = dp_accounting.SelfComposedDpEvent(
        dp_accounting.PoissonSampledDpEvent(sample_rate, dp_accounting.GaussianDpEvent(z)), steps
    )
    accountant = dp_accounting.pld.PLDAccountant()
    accountant.compose(event)
    return float(accountant.get_epsilon(delta))


def accounting_table(n: int, ranks: list[int], delta: float, members: int = PTB_MEMBERS) -> pd.DataFrame:
    """What DP-SGD would certify at §5.1's multiplier for paper A's runs (batch 8, 20 epochs; RDP, since PRV
    and PLD cannot represent so little noise), and the multiplier it would need for eps = 8, with that
    multiplier's eps from all three accountants (RDP, Opacus's PRV, dp-accounting's PLD).  ``prv_gib_*``: the
    size of one float64 array over PRV's discretisation at either multiplier (:func:`prv_grid_points`)."""
    q = PAPER_BATCH / members
    steps = PAPER_EPOCHS * members // PAPER_BATCH
    z8 = needed_multiplier(8.0, q, steps)
    eps_rdp8, eps_prv8, eps_pld8 = rdp_epsilon(z8, q, steps)[0], prv_epsilon(z8, q, steps), pld_epsilon(z8, q, steps)
    gib = 8 / 2**30
    rows = []
    for r in ranks:
        z = projection.formula_multiplier(delta, PAPER_BATCH, n, r)
        eps_formula, edge = rdp_epsilon(z, q, steps)
        rows.append(
            {
                "n": n,
                "r": r,
                "b": PAPER_BATCH,
                "steps": steps,
                "z_formula": z,
                "eps_rdp_at_formula": eps_formula,
                "rdp_best_order_at_grid_edge": edge,
                "z_needed_eps8": z8,
                "eps_rdp_at_needed": eps_rdp8,
                "eps_prv_at_needed": eps_prv8,
                "eps_pld_at_needed": eps_pld8,
                "prv_gib_at_formula": prv_grid_points(z, q, steps) * gib,
                "prv_gib_at_needed": prv_grid_points(z8, q, steps) * gib,
            }
        )
    return rounded_frame(pd.DataFrame(rows), 4)


def claims(
    jl: pd.DataFrame,
    eq23: pd.DataFrame,
    mult: pd.DataFrame,
    acct: pd.DataFrame,
    scale: Scale,
    real: pd.DataFrame | None = None,
) -> list[Claim]:
    """Ledger entries for Theorem 5.1, eqs. 22-23 and the multiplier of §5.1 (``real``: the multiplier on the
    engine's per-text gradients, :func:`real_multiplier_table`)."""
    out = []
    accountants = [
        check_bound(
            f"PRV and PLD certify no more than RDP at the needed multiplier ({name})",
            float(acct[column].iloc[0]),
            float(acct["eps_rdp_at_needed"].iloc[0]) * 1.0001,
            role="instrument",
        )
        for name, column in (("PRV", "eps_prv_at_needed"), ("PLD", "eps_pld_at_needed"))
    ]
    accountants.append(
        check_bound(
            "PRV and PLD agree within 5% at the needed multiplier",
            abs(float(acct["eps_prv_at_needed"].iloc[0]) / float(acct["eps_pld_at_needed"].iloc[0]) - 1),
            0.05,
            role="instrument",
        )
    )
    instruments = [
        check_estimate(
            f"exact {side} tail vs Monte Carlo with real matrices, Delta={r.Delta}, p={r.p}",
            Estimate(mc, math.sqrt(max(mc, 1 / r.draws) * (1 - mc) / r.draws), int(r.draws)),
            exact,
            role="instrument",
        )
        for r in jl.itertuples()
        for side, mc, exact in (("upper", r.mc_upper, r.upper), ("lower", r.mc_lower, r.lower))
    ]
    checks = [
        check_bound(
            f"P(||T(x)|| {op} (1 {sign} Delta)||x||) <= p/2, Delta={r.Delta}, p={r.p}, r={r.r}", value, r.p_half
        )
        for r in jl.itertuples()
        for op, sign, value in ((">=", "+", r.upper), ("<=", "-", r.lower))
    ]
    worst = float(np.max(np.maximum(jl["upper"], jl["lower"]) / jl["p_half"]))
    out.append(
        Claim(
            claim_id="A-5.1-JL",
            scale=scale.name,
            checks=checks + instruments,
            summary=f"with r = ceil(Delta^-2 log(2/p)), the largest one-sided probability is {worst:.3g} times p/2 "
            f"over {len(jl)} (Delta, p); below 1 for p >= 1e-9, above 1 at p = 1e-12 and beyond; "
            "||x A^T||^2/||x||^2 is exactly chi^2_r/r, whatever m",
            note="As quoted, without the constant that Matousek's lemma carries, the bound holds for moderate p but "
            "fails for very small p: the chi-square tail decays like (p/2)^c with c < 1 (c ~ 0.88 at Delta = 1/2). "
            "Small p is exactly what a union bound over the rows, samples and steps of a training run needs.",
        )
    )
    checks = [
        check_bound(
            f"P(row norm outside the eq. 22 interval) <= p, Delta={r.Delta}, p={r.p}, r={r.r}",
            r.upper + r.lower,
            r.p,
        )
        for r in jl.itertuples()
    ]
    out.append(
        Claim(
            claim_id="A-5.eq22",
            scale=scale.name,
            checks=checks,
            summary="Theorem 5.1 rearranged for one row fixed before A is drawn: the interval "
            "[(1-Delta)/(1+Delta), 1] sqrt(r) c holds with probability at least 1 - p for p >= 1e-9, and fails "
            "at the same very small p as the theorem",
            note="Exact only for a gradient row that does not depend on A, as at the first step (B = 0). Later "
            "gradients depend on A through training; that case needs trained models and is not tested here.",
        )
    )
    checks = [  # a union bound is a theorem: shown, not counted
        check_bound(
            f"measured P(all rows within) >= 1 - n b p, b={r.b}, r={r.r}, {r.structure}",
            r.all_rows_within,
            r.guarantee_1_minus_nbp,
            direction=">=",
            role="identity",
        )
        for r in eq23.itertuples()
    ]
    checks += [
        check_bound(
            f"the guarantee is informative (1 - n b p > 0), b={r.b}, r={r.r}",
            r.guarantee_1_minus_nbp,
            0.0,
            direction=">=",
            role="caveat",
        )
        for r in eq23[eq23["structure"] == "rank1"].itertuples()
    ]
    indep = eq23[eq23["structure"] == "independent"]
    out.append(
        Claim(
            claim_id="A-5.eq23",
            scale=scale.name,
            checks=checks,
            summary=f"1 - n b p ranges from {eq23['guarantee_1_minus_nbp'].min():.3g} to "
            f"{eq23['guarantee_1_minus_nbp'].max():.3g} at n = {int(eq23['n'].iloc[0])}: vacuous. With independent "
            f"rows some row leaves the interval in {1 - indep['all_rows_within'].max():.0%} of the "
            f"{int(indep['draws'].min())} simulated batches per setting, yet every per-sample Frobenius norm stays "
            f"in range in {indep['frobenius_within'].min():.0%} of them",
            note="The union bound is true but says nothing at GPT-2 sizes. Its conclusion (bounded per-sample norms) "
            "holds anyway for independent rows, by concentration over the n rows, not by the argument given; for "
            "rank-1 per-sample gradients each sample's rows fail together, so the conclusion holds exactly as often "
            "as the b sample directions all stay in the interval.",
        )
    )
    checks = [
        check_bound(
            f"LoRA's noise multiplier at least the formula's, {r.geometry}, r={r.r}",
            r.z_equivalent,
            r.z_formula,
            direction=">=",
        )
        for r in mult.itertuples()
    ]
    if real is not None:
        checks += [
            check_bound(
                f"real per-text gradients (GPT-2 at the start of fine-tuning on PTB), b={r.b}, r={r.r}: the smallest "
                f"measured/formula ratio over {r.batches} batches",
                r.ratio_min,
                1.0,
                direction=">=",
            )
            for r in real.itertuples()
        ]
    worst_acct = acct.loc[acct["eps_rdp_at_formula"].idxmin()]
    out.append(
        Claim(
            claim_id="A-5.1-z",
            scale=scale.name,
            checks=checks + accountants,
            summary="measured/formula multiplier: "
            + ", ".join(f"{g} {mult[mult['geometry'] == g]['ratio'].min():.3g}" for g in projection.GEOMETRIES)
            + (
                ""
                if real is None
                else f"; real GPT-2 per-text gradients {real['ratio_mean'].min():.3g} to "
                f"{real['ratio_mean'].max():.3g} (mean over batches; smallest batch {real['ratio_min'].min():.3g})"
            )
            + f". At the formula's z = {worst_acct.z_formula:.3g} (r = {int(worst_acct.r)}), DP-SGD over paper A's "
            f"run would certify only eps = {worst_acct.eps_rdp_at_formula:.3g} (RDP); eps = 8 needs z = "
            f"{worst_acct.z_needed_eps8:.3g}",
            note="The noise is LoRA's on the sum of the per-sample gradients, so it scales with that sum, not with "
            "the clipping norm: the formula holds only as a variance inequality, when the per-sample gradients add "
            "up, and fails when they cancel (the noise vanishes with the batch gradient); the real per-text "
            "gradients of the book's toy GPT-2 add up, like the random geometry (most of the margin is the "
            "formula's own slack; their common direction adds a few per cent). The multiplier is measured as the "
            "noise's variance over A: row scaling uses the same A, so Lemma 3.1's variance with the scaled sum held "
            "fixed (the plug-in, shown beside it) overstates it by several per cent. Even where the variances "
            "match, the noise depends on the data and has rank at most r, so no DP guarantee follows; paper A "
            "itself presents the connection as intuitive, assuming nbp << 1 and a near-Gaussian noise. Taken at "
            "face value, the multiplier is "
            f"{(acct['z_needed_eps8'] / acct['z_formula']).min():.2g} to "
            f"{(acct['z_needed_eps8'] / acct['z_formula']).max():.2g} times below the one that certifies eps = 8.",
        )
    )
    return out


def key_numbers(
    eq23: pd.DataFrame, mult: pd.DataFrame, acct: pd.DataFrame, cost: dict, larger: dict | None = None
) -> dict[str, float]:
    """The numbers the chapter's takeaway quotes (glued by the notebook); ``larger``, the cost measured on the
    larger scale's model, adds its two ratios."""
    row = acct.loc[acct["eps_rdp_at_formula"].idxmin()]
    numbers = {
        "guarantee_min": eq23["guarantee_1_minus_nbp"].min(),
        "z_formula": row["z_formula"],
        "z_needed_eps8": row["z_needed_eps8"],
        "eps_prv_at_needed": row["eps_prv_at_needed"],
        "eps_pld_at_needed": row["eps_pld_at_needed"],
        "needed_over_formula_min": (acct["z_needed_eps8"] / acct["z_formula"]).min(),
        "needed_over_formula_max": (acct["z_needed_eps8"] / acct["z_formula"]).max(),
        "independent_draws": eq23.loc[eq23["structure"] == "independent", "draws"].min(),
        "eps_rdp": row["eps_rdp_at_formula"],
        "prv_tib_at_formula_min": acct["prv_gib_at_formula"].min() / 1024,
        "prv_tib_at_formula_max": acct["prv_gib_at_formula"].max() / 1024,
        "prv_mib_at_needed": row["prv_gib_at_needed"] * 1024,
        "r": row["r"],
        "random_ratio": mult[mult["geometry"] == "random"]["ratio"].min(),
        "time_ratio": cost["time_ratio"],
        "memory_ratio": cost["memory_ratio"],
        "cost_runs": cost["runs"],
        "cost_limit": COST_LIMIT,
        "strict_cost_limit": STRICT_COST_LIMIT,
    }
    if larger is not None:
        numbers |= {"larger_time_ratio": larger["time_ratio"], "larger_memory_ratio": larger["memory_ratio"]}
    return quoted_numbers(KEY, numbers)


# ---------------------------------------------------------------- measured with the engine (loaded)
REAL_MULTIPLIER = "results/published/multiplier/cpu-small-pretrained.json"  # relative to the repository root
REGENERATE_MULTIPLIER = regenerate("multiplier")
REAL_COLUMNS_ORDER = (
    "b",
    "r",
    "z_formula",
    "ratio_mean",
    "ratio_se",
    "ratio_min",
    "ratio_max",
    "ratio_signflip_mean",
    "ratio_plugin_mean",
    "batches",
    "draws",
)
REAL_COLUMNS = frozenset(REAL_COLUMNS_ORDER)


def load_real_multiplier(path=None) -> dict:
    """The committed §5.1 multiplier on real per-text gradients (``mia.multiplier``; default ``REAL_MULTIPLIER``),
    its checksum verified."""
    from pathlib import Path

    from ..ledger import ledger_dir
    from ..store import read_record

    path = Path(path) if path is not None else ledger_dir().parent / REAL_MULTIPLIER
    if not path.is_file():
        raise FileNotFoundError(f"no multiplier measurement at {path}; regenerate it with: {REGENERATE_MULTIPLIER}")
    try:
        return read_record(path, "multiplier")
    except ValueError as err:
        raise ValueError(f"{path}: {err}; regenerate it with: {REGENERATE_MULTIPLIER}") from None


def real_multiplier_table(record: dict) -> pd.DataFrame:
    """One row per (b, r): the formula's multiplier and the measured one over it (mean over batches, standard
    error, smallest and largest batch), the same with the texts' signs flipped at random, and Lemma 3.1's
    plug-in (S(A) held fixed) over the formula."""
    return rounded_frame(pd.DataFrame(record["table"])[list(REAL_COLUMNS_ORDER)], 3)


def real_multiplier_numbers(table: pd.DataFrame, record: dict) -> dict[str, float]:
    """The numbers of the real-gradient measurement that the chapter quotes (glued by the notebook)."""
    gain = table["ratio_mean"] / table["ratio_signflip_mean"] - 1
    bias = table["ratio_plugin_mean"] / table["ratio_mean"] - 1
    numbers = {
        "real_ratio_low": table["ratio_mean"].min(),
        "real_ratio_high": table["ratio_mean"].max(),
        "real_ratio_min": table["ratio_min"].min(),
        "real_se_max": table["ratio_se"].max(),
        "real_signflip_low": table["ratio_signflip_mean"].min(),
        "real_signflip_high": table["ratio_signflip_mean"].max(),
        "real_common_gain_low_pct": 100 * gain.min(),
        "real_common_gain_high_pct": 100 * gain.max(),
        "real_plugin_bias_low_pct": 100 * bias.min(),
        "real_plugin_bias_high_pct": 100 * bias.max(),
        "real_b_min": table["b"].min(),
        "real_b_max": table["b"].max(),
        "real_r_min": table["r"].min(),
        "real_r_max": table["r"].max(),
        "real_texts": record["texts"],
        "real_batches": table["batches"].min(),
        "real_draws": table["draws"].min(),
        "real_n": record["n"],
        "real_m": record["m"],
    }
    return quoted_numbers(KEY, numbers)


AUDIT_RESULTS = "results/published/cpu-small/audit/synthetic-email"  # relative to the repository root
COST_RESULTS = "results/published/bench/rowscale_cost.json"
COST_RESULTS_LARGER = "results/published/bench/rowscale_cost_cpu-large.json"  # the larger CPU scale's model
REGENERATE = regenerate("audit", "cost", "cost-large")
MEANINGFUL_EPSILON = 10.0  # a certificate above this says nothing a reader could rely on
AUDIT_RESAMPLES = 2000
AUDIT_POWER = 0.5  # an audit that proves less than this about full fine-tuning cannot judge LoRA
# The audit's design, fixed before its runs (issue 29) and on coins no earlier run had used: an exploratory run on
# Penn Treebank with seed 0 (commit c2a56cb) chose the settings; these seeds draw a new split, new canary coins
# and new training randomness.  A record of any other design is refused.
AUDIT_DESIGN = {
    "dataset": "synthetic-email",
    "seeds": (1, 2, 3),
    "canaries": 300,
    "guesses_each_side": 40,
    "epochs": 16,
}
# Full fine-tuning audited a second time at a lower rate (make results-a5, --lr), chosen before its runs to end near
# the perplexity of the audits that train only the LoRA factors: the frontier's lowest full fine-tuning rate on the
# synthetic e-mails (seed 0, another split), whose final (8-epoch) checkpoint came nearest them.  The audit trains
# 16 epochs on the members and canaries, about three times the steps, and ended at a lower perplexity than they.
FIXED_FULL_LR = 3e-5
_AUDIT = 31


def _design_of(record: dict) -> dict:
    manifest = record["manifest"]
    return {
        "dataset": manifest["cell"]["dataset"],
        "seed": manifest["cell"]["seed"],
        "canaries": manifest["canary_config"]["canaries"],
        "guesses_each_side": manifest["canary_config"]["guesses_each_side"],
        "epochs": manifest["train_config"]["epochs"],
    }


def check_design(records: list[dict], design: dict | None = None) -> None:
    """Refuse audits that are not :data:`AUDIT_DESIGN`'s (or ``design``'s): another corpus, seed, number of canaries,
    guesses or epochs, or a design whose seeds are not all there for every method."""
    design = design or AUDIT_DESIGN
    for record in records:
        found = _design_of(record)
        wanted = {k: v for k, v in design.items() if k != "seeds"}
        off = {k: found[k] for k in wanted if found[k] != wanted[k]}
        if found["seed"] not in design["seeds"]:
            off["seed"] = found["seed"]
        if off:
            raise ValueError(
                f"{audit_name(record)} is not of the audit's fixed design "
                f"({', '.join(f'{k}={v}' for k, v in off.items())}"
                f"; the design: {design}): rerun it with {REGENERATE}"
            )
    seeds = {}
    for record in records:
        seeds.setdefault(audit_variant(record), set()).add(record["manifest"]["cell"]["seed"])
    short = sorted(v for v, s in seeds.items() if s != set(design["seeds"]))
    if short:
        raise ValueError(f"{', '.join(short)}: not every seed of {design['seeds']} is audited: {REGENERATE}")


def load_audits(folder=None, design: dict | None = None) -> list[dict]:
    """The committed canary-audit records of this chapter (default: ``AUDIT_RESULTS`` in the checkout), each
    verified against its checksum and all of the audit's fixed design (:func:`check_design`)."""
    from pathlib import Path

    from ..ledger import ledger_dir
    from ..store import read_record

    folder = Path(folder) if folder is not None else ledger_dir().parent / AUDIT_RESULTS
    files = sorted(folder.glob("*.json"))
    if not files:
        raise FileNotFoundError(f"no audit results in {folder}; regenerate them with: {REGENERATE}")
    records = []
    for path in files:
        try:
            records.append(read_record(path, "canary-audit"))
        except ValueError as err:
            raise ValueError(f"{path} does not verify ({err}): regenerate it ({REGENERATE})") from None
    check_design(records, design)
    return records


def _fixed_lr(record: dict) -> float | None:
    """The rate ``--lr`` fixed for an audit (None: the sweep chose it)."""
    return ((record["manifest"].get("config") or {}).get("overrides") or {}).get("lr")


def audit_variant(record: dict) -> str:
    """A record's method, rank, DP-SGD's multiplier and a rate fixed by ``--lr``, as its file is named less the seed
    (``dpsgd-r8-z1``, ``full-lr3e-05``)."""
    from ..mia.experiments.grid import audit_stem

    cell = record["manifest"]["cell"]
    sigma = record["training"]["noise_multiplier"] if cell["method"] == "dpsgd" else None
    return audit_stem(cell["method"], cell["rank"], sigma, _fixed_lr(record))


def audit_name(record: dict) -> str:
    """A record's short name, as its file is named: method, rank, DP-SGD's multiplier and seed (``dpsgd-r8-z1-s1``)."""
    return f"{audit_variant(record)}-s{record['manifest']['cell']['seed']}"


def _label(record: dict) -> str:
    """A record's variant as a reader sees it (:func:`labels.variant`: method, rank, noise and a fixed rate)."""
    from ..labels import variant

    return variant(audit_variant(record))


def _canary_auc(scores: np.ndarray, included: np.ndarray) -> float:
    from ..mia.attacks.metrics import roc_auc

    return roc_auc(-scores[included], -scores[~included])  # a higher score says "trained on"


def _audited(records: list[dict]) -> dict[str, dict[int, tuple[np.ndarray, np.ndarray]]]:
    """Each variant's canary scores and inclusion by seed; the audits of one seed must share one set of canaries,
    and each record's stored counts and bound must be what the current code computes from its stored scores (else
    the record is stale)."""
    from ..mia.attacks.canary import CanaryConfig, canary_audit

    out: dict[str, dict[int, tuple[np.ndarray, np.ndarray]]] = {}
    coins: dict[int, np.ndarray] = {}
    for record in records:
        seed = record["manifest"]["cell"]["seed"]
        scores, included = np.asarray(record["scores"], dtype=np.float64), np.asarray(record["included"], bool)
        if not np.array_equal(coins.setdefault(seed, included), included):
            raise ValueError(f"the audits of seed {seed} do not share their canaries' inclusion: rerun them")
        if canary_audit(scores, included, CanaryConfig(**record["manifest"]["canary_config"])) != record["audit"]:
            raise ValueError(f"{audit_name(record)}: the stored audit is not what the bound computes now: {REGENERATE}")
        out.setdefault(audit_variant(record), {})[seed] = (scores, included)
    return out


def _arms(scores: np.ndarray, included: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Canary scores as (members, non-members) signals in :func:`metrics.roc_auc`'s convention (lower: member)."""
    return -scores[included], -scores[~included]


def audit_table(records: list[dict], scale: Scale) -> pd.DataFrame:
    """One row per audited method, over the design's seeds: mean utility, its certificate (DP-SGD only), the one-run
    audits' counts summed over seeds and their smaller epsilon bound, and the canary AUC averaged over seeds with the
    95% interval of a two-stage bootstrap (seeds, then canaries within a seed)."""
    from ..mia.attacks.metrics import roc_auc, seeds_interval

    order = {"full": 0, "lora": 1, "rowscale": 2, "dpsgd": 3}
    audited = _audited(records)
    rng = rng_for(scale.seed, _AUDIT)
    groups: dict[str, list[dict]] = {}
    for record in records:
        groups.setdefault(audit_variant(record), []).append(record)
    rows = []
    for variant, runs in sorted(
        groups.items(),
        key=lambda item: (
            _fixed_lr(item[1][0]) is not None,  # last, so that the swept audits draw the bootstrap's stream as before
            order[item[1][0]["manifest"]["cell"]["method"]],
            item[1][0]["manifest"]["cell"]["rank"] or 0,
            -item[1][0]["training"].get("noise_multiplier", 0),
        ),
    ):
        runs = sorted(runs, key=lambda r: r["manifest"]["cell"]["seed"])
        first, training = runs[0], runs[0]["training"]
        seeds = audited[variant]
        auc = seeds_interval(roc_auc, [_arms(*seeds[s]) for s in sorted(seeds)], rng, AUDIT_RESAMPLES)
        rows.append(
            {
                "method": _label(first),
                "seeds": len(runs),
                "epochs": first["manifest"]["train_config"]["epochs"],
                "lr": "/".join(dict.fromkeys(f"{r['manifest']['train_config']['lr']:g}" for r in runs)),
                "steps": training["steps"],
                "val_perplexity": float(np.mean([r["validation_perplexity"] for r in runs])),
                "certified_eps_prv": np.nan if training.get("epsilon") is None else training["epsilon"],
                "certified_eps_rdp": np.nan if training.get("epsilon_rdp") is None else training["epsilon_rdp"],
                "canaries": first["audit"]["canaries"],
                "right": sum(r["audit"]["right"] for r in runs),
                "guesses": sum(r["audit"]["guesses"] for r in runs),
                "eps_lower_bound": min(r["audit"]["epsilon_lower_bound"] for r in runs),
                "canary_auc": auc.value,
                "auc_low": auc.low,
                "auc_high": auc.high,
                "name": variant,
            }
        )
    return rounded_frame(pd.DataFrame(rows), 4)


def audit_differences(records: list[dict], pairs: dict[str, tuple[str, str]], scale: Scale) -> pd.DataFrame:
    """Canary AUC of one audited method minus another's (``pairs``: a name for each (audit, minus) of
    :func:`audit_variant`), averaged over seeds, with the two-stage paired bootstrap of
    :func:`metrics.paired_difference`:
    seeds, then canaries, the same canaries for both methods (the audits of one seed share their canaries)."""
    from ..mia.attacks.metrics import Arms, paired_difference, roc_auc

    audited = _audited(records)
    missing = sorted({name for pair in pairs.values() for name in pair} - set(audited))
    if missing:
        raise ValueError(f"no audit named {', '.join(missing)} among {', '.join(sorted(audited))}: {REGENERATE}")
    rng = rng_for(scale.seed, _AUDIT, 1)
    rows = []
    for key, (a, b) in pairs.items():
        seeds = sorted(audited[a])
        arms = [Arms(_arms(*audited[a][s]), _arms(*audited[b][s])) for s in seeds]
        ci = paired_difference(roc_auc, arms, rng, AUDIT_RESAMPLES)
        rows.append({"comparison": key, "audit": a, "minus": b, "difference": ci.value, "low": ci.low, "high": ci.high})
    return rounded_frame(pd.DataFrame(rows), 4)


def implied_multiplier(record: dict, layers: int = 1) -> float:
    """§5.1's multiplier for a row-scaled record's training: its Delta, batch size and rank, and the rows of the
    weights that LoRA adapts (GPT-2's ``c_attn``: 3 x the width per layer; ``layers`` > 1 reads the adapted layers
    of all blocks as one W, as DP-SGD clips them together)."""
    manifest = record["manifest"]
    n = 3 * manifest["model"]["n_embd"] * layers
    delta = manifest["config"]["engine"]["rowscale"]["delta"]
    return projection.formula_multiplier(delta, manifest["train_config"]["batch_size"], n, manifest["cell"]["rank"])


AUDIT_PAIRS = {  # name: (audit, minus), for the claim and the page; {implied}: DP-SGD at §5.1's multiplier
    "rowscale_full": ("rowscale-r8", "full"),
    "lora_full": ("lora-r8", "full"),
    "rowscale_dp": ("rowscale-r8", "dpsgd-r8-z{implied:g}"),
    "lora_dp": ("lora-r8", "dpsgd-r8-z{implied:g}"),
    "rowscale_lora": ("rowscale-r8", "lora-r8"),
    "rowscale_dp_one": ("rowscale-r8", "dpsgd-r8-z1"),
    "dp_implied_dp_one": ("dpsgd-r8-z{implied:g}", "dpsgd-r8-z1"),
}
FIXED_PAIRS = {  # the same against full fine-tuning at FIXED_FULL_LR ({fixed}), where it was audited
    "rowscale_full_fixed": ("rowscale-r8", "full-lr{fixed:g}"),
    "lora_full_fixed": ("lora-r8", "full-lr{fixed:g}"),
    "dp_implied_full_fixed": ("dpsgd-r8-z{implied:g}", "full-lr{fixed:g}"),
}
FIXED_FULL = f"full-lr{FIXED_FULL_LR:g}"
EQUIVALENCE_MARGIN = 0.05  # canary AUC: "mimics" read as the difference's interval inside (-margin, +margin)


def _rowscale_record(records: list[dict]) -> dict:
    """The row-scaled audit, whose training sets §5.1's multiplier."""
    rowscale = [r for r in records if r["manifest"]["cell"]["method"] == "rowscale"]
    if not rowscale:
        raise ValueError(f"no row-scaled audit among the records: {REGENERATE}")
    return rowscale[0]


def audit_pairs(records: list[dict]) -> dict[str, tuple[str, str]]:
    """:data:`AUDIT_PAIRS` with DP-SGD at §5.1's multiplier named as its record is, and :data:`FIXED_PAIRS` where
    full fine-tuning was audited at :data:`FIXED_FULL_LR`."""
    implied = implied_multiplier(_rowscale_record(records))
    pairs = AUDIT_PAIRS | (FIXED_PAIRS if _has_fixed(records) else {})
    names = {"implied": implied, "fixed": FIXED_FULL_LR}
    return {key: (a.format(**names), b.format(**names)) for key, (a, b) in pairs.items()}


def _has_fixed(records: list[dict]) -> bool:
    return any(audit_variant(r) == FIXED_FULL for r in records)


def audit_claim(table: pd.DataFrame, diffs: pd.DataFrame, records: list[dict], scale: Scale) -> Claim:
    """A-5.1-equivalence from the canary audits of the fixed design: row-scaled LoRA mimics DP-SGD at §5.1's
    multiplier.  Core: equivalence in canary AUC (the difference's interval inside +-``EQUIVALENCE_MARGIN``, two
    one-sided checks) at matched utility (perplexities within ``UTILITY_MATCH``); each fails if row scaling behaves
    unlike that DP-SGD.  An audit that cannot catch full fine-tuning, or cannot tell DP-SGD at sigma = 1 from DP-SGD at
    the multiplier, judges nothing: no evidence then."""
    row = table.set_index("name")
    diff = {(r.audit, r.minus): r for r in diffs.itertuples()}
    pairs = audit_pairs(records)
    implied = implied_multiplier(_rowscale_record(records))
    rowscale, dp_implied, dp_one = pairs["rowscale_dp"][0], pairs["rowscale_dp"][1], pairs["rowscale_dp_one"][1]
    certified = float(row.loc[dp_one, "certified_eps_prv"])
    rdp_implied = row.loc[dp_implied, "certified_eps_rdp"]
    power = float(row.loc["full", "eps_lower_bound"])
    noise_levels = diff[pairs["dp_implied_dp_one"]]
    below_certificate = check_bound(
        "the audit stays below DP-SGD's certificate at sigma=1 on every seed (else the audit or the accountant is "
        "wrong)",
        float(max(r["audit"]["epsilon_lower_bound"] for r in records if audit_variant(r) == dp_one)),
        certified,
        role="instrument",
    )
    weak = None
    if power < AUDIT_POWER:
        weak = f"the audit proves only epsilon >= {power:.2f} for full fine-tuning (below {AUDIT_POWER:g})"
    elif noise_levels.low <= 0:
        weak = (
            f"the audit cannot tell DP-SGD at sigma=1 from DP-SGD at {implied:.3g} (difference "
            f"{noise_levels.difference:+.3f}"
            f", {noise_levels.low:+.3f} to {noise_levels.high:+.3f})"
        )
    fixed = _fixed_summary(row, diff, pairs)
    if weak:
        return Claim(
            claim_id="A-5.1-equivalence",
            scale=scale.name,
            checks=[below_certificate],
            summary=f"{weak}: too weak to judge LoRA here{fixed}",
        )
    rowscale_dp = diff[pairs["rowscale_dp"]]
    interval = (float(rowscale_dp.low), float(rowscale_dp.high))
    ratio = float(row.loc[rowscale, "val_perplexity"]) / float(row.loc[dp_implied, "val_perplexity"])
    checks = [
        check_bound(
            f"the audit has power: its epsilon lower bound for full fine-tuning is at least {AUDIT_POWER:g} on every "
            "seed",
            power,
            AUDIT_POWER,
            direction=">=",
            role="instrument",
        ),
        below_certificate,
        check_bound(
            f"row-scaled LoRA's canary AUC at most {EQUIVALENCE_MARGIN:g} above DP-SGD's at §5.1's multiplier "
            f"{implied:.3g} (equivalence, upper side)",
            float(rowscale_dp.difference),
            EQUIVALENCE_MARGIN,
            interval=interval,
        ),
        check_bound(
            f"row-scaled LoRA's canary AUC at most {EQUIVALENCE_MARGIN:g} below DP-SGD's at §5.1's multiplier "
            f"{implied:.3g} (equivalence, lower side)",
            float(rowscale_dp.difference),
            -EQUIVALENCE_MARGIN,
            direction=">=",
            interval=interval,
        ),
        check_bound(
            f"matched utility: row-scaled LoRA's validation PPL within a factor {UTILITY_MATCH:g} of DP-SGD's at "
            "§5.1's multiplier (the larger over the smaller)",
            max(ratio, 1 / ratio),
            UTILITY_MATCH,
        ),
        check_bound(
            "row-scaled LoRA's canary AUC resolved below full fine-tuning's (upper end; any parameter-efficient method "
            "passes this, so it is no evidence of DP-SGD-like behaviour)",
            float(diff[pairs["rowscale_full"]].high),
            0.0,
            role="caveat",
        ),
        check_bound(
            f"DP-SGD at §5.1's multiplier {implied:.3g} certifies a meaningful epsilon (RDP)",
            math.inf if not np.isfinite(rdp_implied) else float(rdp_implied),
            MEANINGFUL_EPSILON,
            role="caveat",
        ),
    ]
    seeds = len({r["manifest"]["cell"]["seed"] for r in records})
    return Claim(
        claim_id="A-5.1-equivalence",
        scale=scale.name,
        checks=checks,
        summary=f"one-run canary audits on {seeds} fresh seeds ({int(row['canaries'].iloc[0])} held-out "
        f"synthetic e-mails per seed, each in with probability 1/2, {int(row['epochs'].iloc[0])} epochs), the smaller "
        f"bound of the seeds: epsilon >= {power:.2f} for full fine-tuning, {row.loc['lora-r8', 'eps_lower_bound']:.2f}"
        f" for LoRA r=8, {row.loc[rowscale, 'eps_lower_bound']:.2f} row-scaled, "
        f"{row.loc[dp_implied, 'eps_lower_bound']:.2f} for DP-SGD at §5.1's multiplier {implied:.3g} (which certifies "
        f"nothing) and {row.loc[dp_one, 'eps_lower_bound']:.2f} at sigma=1 (certified {certified:.2f}); row-scaled "
        f"minus DP-SGD at the multiplier {rowscale_dp.difference:+.3f} canary AUC ({rowscale_dp.low:+.3f} to "
        f"{rowscale_dp.high:+.3f}), validation PPL {row.loc[rowscale, 'val_perplexity']:.4g} against "
        f"{row.loc[dp_implied, 'val_perplexity']:.4g}{fixed}",
        note=(
            "An audit gives lower bounds, so it can refute a guarantee but never confirm one: what it measures holds "
            "for this model, these canaries and this attack (the loss drop from the base model). The design was fixed "
            "before these runs, after an exploratory run on Penn Treebank with seed 0 (where the LoRA variants did not "
            "learn the corpus): synthetic e-mails, which every method learns, seeds 1 to 3 (a new split, new canary "
            "coins, new training randomness), the same canaries, guesses and epochs for every method. Core: the "
            "equivalence itself, as two one-sided checks on the paired difference in canary AUC (seeds, then "
            f"canaries, resampled), which pass only if its 95% interval lies inside ±{EQUIVALENCE_MARGIN:g}, and "
            "matched utility; each would fail if row scaling made LoRA leak, or learn, unlike DP-SGD at its "
            "multiplier. The audit must first catch full fine-tuning and tell DP-SGD at sigma=1 from DP-SGD at the "
            "multiplier, else it judges nothing. Caveats: leaking less than full fine-tuning (true of any "
            "parameter-efficient method, and not at matched utility) and the certificate: the multiplier is so "
            "small that DP-SGD there is clipping with "
            "almost no noise and certifies nothing, so even an equivalence is one with clipped training, not with a "
            "private one. DP-SGD here trains the LoRA factors A and B, not W as in §5.1."
        ),
    )


def _fixed_summary(row: pd.DataFrame, diff: dict, pairs: dict[str, tuple[str, str]]) -> str:
    """What the audit of full fine-tuning at :data:`FIXED_FULL_LR` shows, for a claim's summary ('' where not run)."""
    if "rowscale_full_fixed" not in pairs:
        return ""
    full, d = row.loc[FIXED_FULL], diff[pairs["rowscale_full_fixed"]]
    return (
        f"; full fine-tuning at the lower fixed rate {FIXED_FULL_LR:g} (validation PPL {full['val_perplexity']:.4g}, "
        f"below the LoRA-factor audits'): canary AUC {full['canary_auc']:.3f} ({full['auc_low']:.3f} to "
        f"{full['auc_high']:.3f}), epsilon >= {full['eps_lower_bound']:.2f} on its weakest seed; row-scaled minus it "
        f"{d.difference:+.3f} ({d.low:+.3f} to {d.high:+.3f})"
    )


def audit_numbers(table: pd.DataFrame, diffs: pd.DataFrame, records: list[dict]) -> dict[str, float]:
    """The audit's numbers quoted on the chapter page (glue keys ``a5_row_scaling_audit_*``)."""
    row = table.set_index("name")
    pairs = audit_pairs(records)
    names = {"full": "full", "lora": "lora-r8", "rowscale": "rowscale-r8"}
    names |= {"dp_implied": pairs["rowscale_dp"][1], "dp_one": pairs["rowscale_dp_one"][1]}
    if _has_fixed(records):
        names["full_fixed"] = FIXED_FULL
    rowscale = _rowscale_record(records)
    numbers = {
        "audit_canaries": int(row["canaries"].iloc[0]),
        "audit_guesses": int(row["guesses"].iloc[0]),
        "audit_seeds": len({r["manifest"]["cell"]["seed"] for r in records}),
        "audit_seed_first": min(r["manifest"]["cell"]["seed"] for r in records),
        "audit_seed_last": max(r["manifest"]["cell"]["seed"] for r in records),
        "audit_guesses_each_side": rowscale["manifest"]["canary_config"]["guesses_each_side"],
        "audit_epochs": int(row["epochs"].iloc[0]),
        "audit_implied_z": implied_multiplier(rowscale),
        "audit_implied_z_joint": implied_multiplier(rowscale, layers=rowscale["manifest"]["model"]["n_layer"]),
        "audit_rows": 3 * rowscale["manifest"]["model"]["n_embd"],
        "audit_batch": rowscale["manifest"]["train_config"]["batch_size"],
        "audit_dp_one_certified": float(row.loc[names["dp_one"], "certified_eps_prv"]),
        "audit_dp_implied_rdp_thousands": float(row.loc[names["dp_implied"], "certified_eps_rdp"]) / 1000,
        "audit_margin": EQUIVALENCE_MARGIN,
        "audit_utility_match": UTILITY_MATCH,
        "audit_power": AUDIT_POWER,
        "audit_wall_minutes": sum(r["manifest"]["wall_seconds"] for r in records) / 60,
    }
    if "full_fixed" in names:
        numbers["audit_fixed_lr"] = FIXED_FULL_LR
    for short, name in names.items():
        numbers[f"audit_eps_{short}"] = float(row.loc[name, "eps_lower_bound"])
        numbers[f"audit_auc_{short}"] = float(row.loc[name, "canary_auc"])
        numbers[f"audit_auc_{short}_low"] = float(row.loc[name, "auc_low"])
        numbers[f"audit_auc_{short}_high"] = float(row.loc[name, "auc_high"])
        numbers[f"audit_right_{short}"] = int(row.loc[name, "right"])
    # the differences and perplexities keep the four significant digits of their tables, so that the page's three
    # decimals round them once, as the ledger does (three digits, then three decimals, can round twice)
    exact = {}
    for key, pair in pairs.items():
        d = diffs[(diffs["audit"] == pair[0]) & (diffs["minus"] == pair[1])].iloc[0]
        exact |= {f"audit_diff_{key}": d["difference"], f"audit_diff_{key}_low": d["low"]}
        exact[f"audit_diff_{key}_high"] = d["high"]
    exact |= {f"audit_ppl_{short}": float(row.loc[name, "val_perplexity"]) for short, name in names.items()}
    return quoted_numbers(KEY, numbers) | quoted_numbers(KEY, exact, digits=4)


def load_cost(path=None) -> dict:
    """A committed row-scaling cost measurement (default: ``COST_RESULTS`` in the checkout), its checksum verified."""
    from pathlib import Path

    from ..ledger import ledger_dir
    from ..store import read_record

    path = Path(path) if path is not None else ledger_dir().parent / COST_RESULTS
    if not path.is_file():
        raise FileNotFoundError(f"no row-scaling cost measurement at {path}; regenerate it with: {REGENERATE}")
    return read_record(path, "rowscale-cost")


def load_larger_cost() -> dict:
    """The same measurement on the larger CPU scale's model (``COST_RESULTS_LARGER``)."""
    from ..ledger import ledger_dir

    return load_cost(ledger_dir().parent / COST_RESULTS_LARGER)


def cost_table(*costs: dict) -> pd.DataFrame:
    """Seconds per epoch and peak memory of plain LoRA, LoRA-FA and row-scaled LoRA-FA, each also as a ratio to
    LoRA-FA's (the baseline with the same frozen A), one row per method and measurement (one per scale's model)."""
    names = (("lora", "LoRA (A and B trained)"), ("lorafa", "LoRA-FA (A frozen)"), ("rowscale", "LoRA-FA (row-scaled)"))
    rows = []
    for cost in costs:
        scale = cost.get("scale", "cpu-small")
        for key, label in names:
            seconds, memory = cost[f"{key}_seconds"], cost[f"{key}_peak_mb"]
            rows.append(
                {
                    "scale": scale,
                    "method": label,
                    "seconds per epoch": seconds,
                    "time / LoRA-FA": seconds / cost["lorafa_seconds"],
                    "peak memory (MB)": memory,
                    "memory / LoRA-FA": memory / cost["lorafa_peak_mb"],
                }
            )
    return rounded_frame(pd.DataFrame(rows), 3)


COST_LIMIT, STRICT_COST_LIMIT = 1.5, 1.1  # "almost no cost" read generously (core) and strictly (caveat)


def cost_claim(cost: dict, scale: Scale, larger: dict | None = None) -> Claim:
    """A-5.cost from the measured time and memory of row-scaled against LoRA with the same frozen A (LoRA-FA);
    ``larger``, the same on the larger CPU scale's model, adds both readings there as caveats."""
    checks = [
        check_bound("time per epoch, row-scaled / LoRA-FA", cost["time_ratio"], COST_LIMIT),
        check_bound("peak memory, row-scaled / LoRA-FA", cost["memory_ratio"], COST_LIMIT),
        check_bound("time ratio, strict reading", cost["time_ratio"], STRICT_COST_LIMIT, role="caveat"),
        check_bound("memory ratio, strict reading", cost["memory_ratio"], STRICT_COST_LIMIT, role="caveat"),
    ]
    where = cost["measured_on"]
    summary = (
        f"row scaling took {cost['time_ratio']:.2f} times the time per epoch and {cost['memory_ratio']:.2f} "
        f"times the peak memory of LoRA with the same frozen A ({cost['model']}; medians of {cost['runs']} runs on "
        f"{where['cpu_count']} cores, torch {where['versions']['torch']})"
    )
    measured_at = "Measured on the CPU at the default scale only"
    if larger is not None:
        tag = larger.get("scale", "larger model")
        for limit, reading in ((COST_LIMIT, ""), (STRICT_COST_LIMIT, ", strict reading")):
            checks += [
                check_bound(f"{tag}: time ratio{reading}", larger["time_ratio"], limit, role="caveat"),
                check_bound(f"{tag}: memory ratio{reading}", larger["memory_ratio"], limit, role="caveat"),
            ]
        summary += (
            f"; on the {larger['model']}: {larger['time_ratio']:.2f} times the time and "
            f"{larger['memory_ratio']:.2f} times the memory"
        )
        measured_at = f"Measured on the CPU at the default scale (core) and on the {tag} model (caveats)"
    return Claim(
        claim_id="A-5.cost",
        scale=scale.name,
        checks=checks,
        summary=summary,
        note=f"'Almost no cost' is read as at most {COST_LIMIT:g} times LoRA-FA's time and memory (core) and at "
        f"most {STRICT_COST_LIMIT:g} times (caveat). Row scaling needs each sample's gradient with respect to B "
        "(Opacus's per-sample gradients here), which plain LoRA never forms. The baseline is LoRA-FA (A frozen, B "
        "trained), so that the ratio is the cost of row scaling alone; plain LoRA, which also trains A, is shown "
        f"beside it. {measured_at}, not on GPT-2 117M.",
    )


# ---------------------------------------------------------- the noise on one row-scaled gradient (A-5.noise-variance)

SMALL_DELTA = 0.25  # the second reading is also checked at a smaller Delta of paper A's range (0, 1/2]
NOISE_M = 64  # the engine's width: rows of the default model's c_attn gradient have 64 entries
_NOISE = 9


def noise_rows(m: int = NOISE_M, seed: int = 0) -> dict[str, np.ndarray]:
    """Two unit gradient rows: ``spread`` (Gaussian entries) and ``peaked`` (90% of its squared norm on one entry)."""
    spread = rng_for(seed, _NOISE).standard_normal(m)
    peaked = np.full(m, math.sqrt(0.1 / (m - 1)))
    peaked[0] = math.sqrt(0.9)
    return {"spread": spread / np.linalg.norm(spread), "peaked": peaked}


def noise_variance_table(ranks: list[int], scale: Scale, delta: float = 0.5, c: float = 1.0) -> pd.DataFrame:
    """LoRA's noise on one row-scaled gradient row, from real Gaussian matrices: the smallest per-element variance
    and the variance of the row's largest entry (Monte Carlo and exact), their excess kurtosis, against paper A's
    bound ((1 - Delta)/(1 + Delta))^2 c^2."""
    from scipy import stats as sstats

    rows = []
    draws = 10 * scale.attack_trials
    for r in ranks:
        for name, g in noise_rows().items():
            noise = projection.row_scaled_noise(g, r, delta, c, draws, rng_for(scale.seed, _NOISE, r, len(name)))
            var = noise.var(axis=0, ddof=1)
            exact, kurt = projection.row_scaled_noise_law(g, r, delta, c)
            j, low = int(np.argmax(g * g)), int(np.argmin(var))
            rows.append(
                {
                    "row": name,
                    "r": r,
                    "largest_entry_share": float(g[j] ** 2),
                    "var_min_mc": float(var[low]),
                    "var_min_exact": float(exact.min()),
                    "var_top_mc": float(var[j]),
                    "var_top_exact": float(exact[j]),
                    "paper_bound": projection.paper_noise_bound(delta, c),
                    "var_top_applied": float(projection.row_scaled_update_variance(g, r, delta, c)[j]),
                    "var_top_applied_small_delta": float(
                        projection.row_scaled_update_variance(g, r, SMALL_DELTA, c)[j]
                    ),
                    "bound_small_delta": projection.paper_noise_bound(SMALL_DELTA, c),
                    "kurtosis_top_exact": float(kurt[j]),
                    "kurtosis_top_mc": float(sstats.kurtosis(noise[:, j])),
                    "kurtosis_median_exact": float(np.median(kurt)),
                    "draws": draws,
                }
            )
    return rounded_frame(pd.DataFrame(rows))


def noise_variance_claim(table: pd.DataFrame, scale: Scale) -> Claim:
    """Ledger entry for 'row-scaled LoRA adds Gaussian-like noise of variance at least ((1-D)/(1+D))^2 c^2'."""
    checks = []
    for row in table.itertuples():
        tag = f"r={row.r}, {row.row} row"
        checks.append(
            check_bound(
                f"{tag}: smallest element variance >= the bound", row.var_min_mc, row.paper_bound, direction=">="
            )
        )
        for which in (
            ("min", "top") if row.r > 4 else ()
        ):  # at r <= 4 the noise has no fourth moment: MC variance is erratic
            checks.append(
                check_close(
                    f"{tag}: Monte Carlo variance ({which}) against the exact formula",
                    getattr(row, f"var_{which}_mc"),
                    getattr(row, f"var_{which}_exact"),
                    rtol=0.1,
                    role="instrument",
                )
            )
        checks.append(
            check_bound(
                f"{tag}, reading the applied update as fixed gradient + zero-mean noise, Delta = {SMALL_DELTA:g}: "
                "variance on the largest entry >= the bound",
                row.var_top_applied_small_delta,
                row.bound_small_delta,
                direction=">=",
                role="caveat",
            )
        )
        checks.append(
            check_bound(
                f"{tag}: Gaussian-like (exact excess kurtosis of the largest entry's noise <= 1)",
                row.kurtosis_top_exact,
                1.0,
                role="caveat",
            )
        )
    bound = float(table["paper_bound"].iloc[0])
    heavy = table[table["kurtosis_top_exact"] > 1]
    peaked_small = table[table["row"] == "peaked"]
    return Claim(
        claim_id="A-5.noise-variance",
        scale=scale.name,
        checks=checks,
        summary=f"literal reading: smallest element variance {table.var_min_mc.min():.3g} against the bound "
        f"{bound:.3g} (Delta = 0.5, c = 1), a factor (1 + Delta)^2 to spare; heavy tails (excess kurtosis above 1"
        + (f" at ranks {', '.join(str(int(r)) for r in sorted(set(heavy.r)))}" if len(heavy) else "")
        + f"). Read as fixed gradient plus zero-mean noise, the variance on a dominant entry is "
        f"{peaked_small.var_top_applied_small_delta.min():.3g} against the bound "
        f"{peaked_small.bound_small_delta.iloc[0]:.3g} at Delta = {SMALL_DELTA:g}",
        note="Two readings. Literally (eq. 11: the noise is g~ (A^T A - I) for the row-scaled row g~), the noise is "
        "(1 - Delta) sqrt(r) c [(|a| - 1/|a|) u + w] with u the row's direction, a = A u and w exactly Gaussian on "
        "the complement of u: its variance is at least (1 - Delta)^2 c^2 at every rank above 2 (infinite at r <= 2), "
        "with no probability attached, but every entry with u_j != 0 has a polynomial tail of index r (infinite "
        "kurtosis at r <= 4; at larger rank noticeable only on entries that dominate their row), and its mean along "
        "u is about -(1 - Delta) c / sqrt(r) (row scaling also shortens the row on average). Read as a fixed "
        "gradient plus zero-mean noise, the update LoRA applies, g~ A^T A = (1 - Delta) sqrt(r) c (|a| u + w), is "
        "light-tailed, but its variance along a dominant entry falls below the bound for the smaller Delta of paper "
        "A's range. One sample only: across a batch the noises share A (see the multiplier above).",
    )


def noise_numbers(table: pd.DataFrame) -> dict[str, float]:
    """The numbers of the one-sample noise that the chapter quotes (glued by the notebook)."""
    peaked = table[table["row"] == "peaked"].set_index("r")
    finite = peaked[np.isfinite(peaked["kurtosis_top_exact"])]
    numbers = {
        "noise_var_min": table["var_min_exact"].min(),
        "noise_bound": table["paper_bound"].iloc[0],
        "noise_kurt_r": finite.index.min(),
        "noise_kurt": finite["kurtosis_top_exact"].iloc[0],
        "applied_var_small_delta": peaked["var_top_applied_small_delta"].min(),
        "applied_bound_small_delta": table["bound_small_delta"].iloc[0],
        "small_delta": SMALL_DELTA,
    }
    return quoted_numbers(KEY, numbers)
