"""Paper B, noisy variants checked: M2's effective sensitivity, M2's and M1's privacy against the noise alone,
with A secret and with A published (a LoRA adapter ships A)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy import optimize, stats

from ..catalogue import regenerate
from ..ledger import Claim, Reading, check_bound, check_close, check_estimate, undecided
from ..numbers import quoted_numbers, rounded_frame
from ..scale import Scale
from ..theory import noisy, wishart
from ..theory.montecarlo import Estimate, rng_for

KEY = "b3_noisy_variants"
D_GPT2 = 768  # the input dimension of GPT-2's attention projection
DELTA = 1e-5
MU = 1.0  # sensitivity / noise standard deviation of one step: the noise alone is the Gaussian mechanism with mu = 1
_RATIO, _M1, _M1_INSTR, _NORMS = 1, 2, 3, 4


def ratio_table(ranks: list[int], scale: Scale, d: int = D_GPT2) -> pd.DataFrame:
    """beta = |P_A u|^2 / |u|^2 from real Gaussian matrices against r/d and the Beta(r/2, (d-r)/2) law, and the
    ratio that privacy at delta = 1e-5 sees: kappa with eps_G(sqrt(kappa) mu) = eps_M2 (one step, and 100 steps
    with A frozen and with A fresh)."""
    rows = []
    for r in ranks:
        draws = scale.attack_trials if r <= 64 else scale.attack_trials // 4  # a QR of d x r per draw
        beta = wishart.sensitivity_ratio(d, r, draws, rng_for(scale.seed, _RATIO, d, r))
        law = noisy.ratio_law(d, r)
        est = Estimate(float(beta.mean()), float(beta.std(ddof=1) / math.sqrt(draws)), draws)

        def kappa(eps: float, steps: int) -> float:  # the Gaussian parameter^2 per step with this eps
            return float(
                optimize.brentq(
                    lambda k: noisy.gaussian_epsilon(DELTA, math.sqrt(steps * k) * MU) - eps, 1e-8, 1.0, xtol=1e-12
                )
            )

        frozen = noisy.epsilon_at(DELTA, lambda e, r=r: float(noisy.m2_delta(e, MU, d, r, steps=100)[0]))
        fresh = noisy.m2_fresh_epsilon(DELTA, MU, d, r, steps=100)
        one = noisy.epsilon_at(DELTA, lambda e, r=r: float(noisy.m2_delta(e, MU, d, r)[0]))
        rows.append(
            {
                "d": d,
                "r": r,
                "r_over_d": r / d,
                "mean_real_matrices": est.mean,
                "mc_se": est.stderr,
                "z": est.z_score(r / d),
                "sd_over_mean": float(law.std() / law.mean()),
                "p_above_2r_over_d": float(law.sf(2 * r / d)),
                "ks_p_value": float(stats.kstest(beta, law.cdf).pvalue),
                "draws": draws,
                "kappa_1_step": kappa(one, 1) / (r / d),
                "kappa_100_frozen": kappa(frozen, 100) / (r / d),
                "kappa_100_fresh": kappa(fresh, 100) / (r / d),
            }
        )
    return rounded_frame(pd.DataFrame(rows), 4)


def m2_table(ranks: list[int], steps: list[int], d: int = D_GPT2) -> pd.DataFrame:
    """eps at delta = 1e-5 after T steps: the noise alone; M2 with a fresh A each step (PLD composition, valid
    for adaptively chosen differences: a certificate); M2 with one frozen A and one difference fixed in advance
    (exact mixture: a scenario, not a certificate, since with A frozen the releases reveal A's row space)."""
    rows = []
    for r in ranks:
        for T in steps:
            frozen = noisy.epsilon_at(DELTA, lambda e, r=r, T=T: float(noisy.m2_delta(e, MU, d, r, steps=T)[0]))
            rows.append(
                {
                    "d": d,
                    "r": r,
                    "steps": T,
                    "eps_noise_alone": noisy.gaussian_epsilon(DELTA, MU, steps=T),
                    "eps_m2_fresh_A": noisy.m2_fresh_epsilon(DELTA, MU, d, r, steps=T),
                    "eps_m2_frozen_A_fixed_difference": frozen,
                }
            )
    return rounded_frame(pd.DataFrame(rows), 4)


def m1_table(ranks: list[int], eps_grid: list[float], scale: Scale, rho: float = 0.99, d: int = D_GPT2) -> pd.DataFrame:
    """delta(eps) of one M1 release for unit neighbours with alignment rho: the noise alone (exact), A secret
    (Monte Carlo over the exact loss), A published (Monte Carlo over the exact law of |M u|)."""
    rows = []
    for r in ranks:
        n = scale.element_draws // 10 if r < d else scale.element_draws  # at r >= d the gain is small: more draws
        pair = noisy.M1Pair(d, r, rho, MU)
        losses = noisy.m1_secret_losses(pair, n, rng_for(scale.seed, _M1, d, r))
        ratio = np.exp(-losses)  # E[exp(-L)] = 1 under v: a check of the density formula
        norms2 = noisy.m1_norm_samples(d, r, n, rng_for(scale.seed, _NORMS, d, r))
        for eps in eps_grid:
            secret, secret_se = wishart.hockey_stick_mc(eps, losses)
            released, released_se = noisy.m1_released_delta(eps, MU, norms2)
            rows.append(
                {
                    "d": d,
                    "r": r,
                    "rho": rho,
                    "eps": eps,
                    "delta_noise_alone": float(noisy.gauss_delta(eps, MU)),
                    "delta_m1_secret_A": secret,
                    "secret_se": secret_se,
                    "delta_m1_published_A": released,
                    "published_se": released_se,
                    "draws": n,
                    "mean_exp_neg_loss": float(ratio.mean()),
                    "mean_exp_neg_loss_se": float(ratio.std(ddof=1) / math.sqrt(n)),
                }
            )
    return rounded_frame(pd.DataFrame(rows))


def instrument_table(scale: Scale) -> pd.DataFrame:
    """Checks of our tools: M1's loss against outputs from real matrices (KS) and at a finer grid, the law of
    |M u|^2 against real matrices (KS), the PLD at beta = 1 against dp-accounting's Gaussian, quadrature
    against the PLD at one step."""
    from dp_accounting.pld import privacy_loss_distribution as pld

    rows = []
    for d, r, rho in [(32, 4, 0.9), (64, 16, 0.99)]:
        pair = noisy.M1Pair(d, r, rho, MU)
        n = scale.attack_trials
        rep = pair.sample(n, rng_for(scale.seed, _M1_INSTR, d, r, 1))
        real = pair.sample_direct(n, rng_for(scale.seed, _M1_INSTR, d, r, 2))
        loss_rep, loss_real = pair.losses(*rep), pair.losses(*real)
        finer = pair.losses(*rep, refine=2)
        rows.append(
            {
                "check": f"M1 loss, representation vs real matrices (KS p-value), d={d}, r={r}, rho={rho}",
                "value": float(stats.ks_2samp(loss_rep, loss_real).pvalue),
                "reference": 1e-3,
                "kind": ">=",
            }
        )
        rows.append(
            {
                "check": f"M1 loss, twice the grid nodes (max |change|), d={d}, r={r}, rho={rho}",
                "value": float(np.abs(finer - loss_rep).max()),
                "reference": 5e-3,
                "kind": "<=",
            }
        )
        a = noisy.m1_norm_samples(d, r, n, rng_for(scale.seed, _M1_INSTR, d, r, 3))
        b = noisy.m1_norm_samples_direct(d, r, n, rng_for(scale.seed, _M1_INSTR, d, r, 4))
        rows.append(
            {
                "check": f"|M u|^2, representation vs real matrices (KS p-value), d={d}, r={r}",
                "value": float(stats.ks_2samp(a, b).pvalue),
                "reference": 1e-3,
                "kind": ">=",
            }
        )
    gauss = pld.from_gaussian_mechanism(1.0 / MU, value_discretization_interval=1e-3).get_epsilon_for_delta(DELTA)
    rows.append(
        {
            "check": "M2 PLD built by our rounding at r = d (all mass at beta = 1) vs dp-accounting's Gaussian PLD "
            "(relative eps gap)",
            "value": abs(noisy.m2_fresh_epsilon(DELTA, MU, 8, 8) - gauss) / gauss,
            "reference": 1e-3,
            "kind": "<=",
        }
    )
    for r in (8, 64):
        quad = noisy.epsilon_at(DELTA, lambda e, r=r: float(noisy.m2_delta(e, MU, D_GPT2, r)[0]))
        fresh = noisy.m2_fresh_epsilon(DELTA, MU, D_GPT2, r)
        exact = noisy.m2_fresh_same_difference_epsilon(
            DELTA, MU, D_GPT2, r, 100, 50 * scale.attack_trials, rng_for(scale.seed, _M1_INSTR, r, 5)
        )
        fresh100 = noisy.m2_fresh_epsilon(DELTA, MU, D_GPT2, r, steps=100)
        for name, value, ref, kind in (
            (
                f"M2 one step, PLD vs quadrature (relative eps gap), r={r}: not below",
                (fresh - quad) / quad,
                -1e-3,
                ">=",
            ),
            (
                f"M2 one step, PLD vs quadrature (relative eps gap), r={r}: pessimistic by at most 2%",
                (fresh - quad) / quad,
                0.02,
                "<=",
            ),
            (
                f"M2 100 steps, fresh A: PLD vs exact average over the ratios' sum (relative eps gap), r={r}: "
                "not below",
                (fresh100 - exact) / exact,
                -1e-2,
                ">=",
            ),
            (
                f"M2 100 steps, fresh A: PLD vs exact average over the ratios' sum (relative eps gap), r={r}: "
                "pessimistic by at most 5%",
                (fresh100 - exact) / exact,
                0.05,
                "<=",
            ),
        ):
            rows.append({"check": name, "value": value, "reference": ref, "kind": kind})
    pair = noisy.M1Pair(5, 3, 0.9, MU)
    y1, y2, R = pair.sample(3, rng_for(scale.seed, _M1_INSTR, 9))
    for i in range(3):
        y = np.zeros(pair.d)
        y[0], y[1], y[2] = y1[i], y2[i], math.sqrt(R[i])
        direct, se = pair.log_density_direct(y, 50 * scale.attack_trials, rng_for(scale.seed, _M1_INSTR, 10, i))
        rows.append(
            {
                "check": f"M1 density (A secret) by quadrature vs averaged over real matrices, output {i + 1} "
                "(|log difference| in standard errors), d=5, r=3",
                "value": abs(float(pair.log_density(y1[i], y2[i], R[i])[0]) - direct) / se,
                "reference": 4.0,
                "kind": "<=",
            }
        )
    frame = pd.DataFrame(rows)
    frame["passed"] = [
        v >= ref if k == ">=" else v <= ref for v, ref, k in zip(frame.value, frame.reference, frame.kind, strict=True)
    ]
    return rounded_frame(frame, 4)


def _instrument_checks(instr: pd.DataFrame, ratios: pd.DataFrame, m1: pd.DataFrame) -> list:
    checks = [
        check_bound(r.check, r.value, r.reference, direction=r.kind, role="instrument") for r in instr.itertuples()
    ]
    checks += [
        check_bound(
            f"beta from real matrices against Beta(r/2, (d-r)/2) (KS p-value), r={int(r.r)}",
            r.ks_p_value,
            1e-3,
            direction=">=",
            role="instrument",
        )
        for r in ratios.itertuples()
    ]
    per_rank = m1.drop_duplicates("r")
    checks += [
        check_estimate(
            f"M1 loss with A secret: E[exp(-L)] = 1 (a likelihood ratio), r={int(r.r)}",
            Estimate(r.mean_exp_neg_loss, r.mean_exp_neg_loss_se, int(r.draws)),
            1.0,
            role="instrument",
        )
        for r in per_rank.itertuples()
    ]
    return checks


def claims(ratios: pd.DataFrame, m2: pd.DataFrame, m1: pd.DataFrame, instr: pd.DataFrame, scale: Scale) -> list[Claim]:
    """Ledger entries for M2's ratio, M1's amplification and "stronger than the noise alone"."""
    instruments = _instrument_checks(instr, ratios, m1)
    out = []

    checks = [
        check_estimate(
            f"mean of |P_A u|^2 / |u|^2 with real matrices = r/d, d={int(r.d)}, r={int(r.r)}",
            Estimate(r.mean_real_matrices, r.mc_se, int(r.draws)),
            r.r_over_d,
        )
        for r in ratios.itertuples()
    ]
    checks += [
        check_bound(
            f"the ratio one step's privacy sees (delta = {DELTA:g}) within 25% of r/d, r={int(r.r)}",
            r.kappa_1_step,
            1.25,
            role="caveat",
        )
        for r in ratios.itertuples()
    ]
    small = ratios.iloc[0]
    out.append(
        Claim(
            claim_id="B-3.m2",
            scale=scale.name,
            checks=checks + instruments,
            summary=f"mean ratio = r/d at every rank tested (r = {', '.join(str(int(r)) for r in ratios.r)}, d = "
            f"{int(small.d)}); the ratio that sets one step's eps at delta = {DELTA:g} is {small.kappa_1_step:.3g} "
            f"r/d at r = {int(small.r)} ({small.kappa_100_fresh:.3g} r/d over 100 steps with a fresh A)",
            note="The ratio is a random variable, Beta(r/2, (d-r)/2): r/d is its mean, and at small rank its spread "
            "is about sqrt(2/r) of the mean, so privacy at small delta sees its upper tail. Over many steps with a "
            "fresh A the spread averages out. With A frozen the releases reveal A's row space, and a difference that "
            "depends on them may lie in it (ratio 1): no reduction is guaranteed.",
        )
    )

    base = m1.loc[m1["eps"] == 1.0].set_index("r")
    d = int(base.d.iloc[0])
    checks = [
        check_bound(
            f"A secret, r={r}: delta(1) + 4 SE below the noise alone's",
            base.loc[r, "delta_m1_secret_A"] + 4 * base.loc[r, "secret_se"],
            base.loc[r, "delta_noise_alone"],
        )
        for r in base.index
    ]
    ranks = sorted(base.index)
    gain = base["delta_noise_alone"] - base["delta_m1_secret_A"]
    checks.append(
        check_bound(
            f"A secret: the gain over the noise alone at the largest rank tried (r={ranks[-1]}) at least that at the "
            f"smallest (r={ranks[0]}) (paper B: amplification 'when the rank is large')",
            float(gain[ranks[-1]]),
            float(gain[ranks[0]]),
            direction=">=",
            role="caveat",
        )
    )
    out.append(
        Claim(
            claim_id="B-3.m1",
            scale=scale.name,
            checks=checks + instruments,
            summary=f"vector queries, d = {d}, rho = {base.rho.iloc[0]}, mu = {MU:g}: at eps = 1, delta with A secret "
            "is "
            + ", ".join(f"{base.loc[r, 'delta_m1_secret_A']:.3g} (r = {r})" for r in base.index)
            + f" against {base.delta_noise_alone.iloc[0]:.3g} for the noise alone",
            note="Judged in paper B's own setting, A secret. Tested on vector queries only, the analogue we can "
            "compute exactly; paper B's statement is about matrix queries under alignment conditions, where the "
            "other columns of a release reveal M, and that version is not tested here. With A secret the "
            "projection's randomness adds noise of variance about U/r across the query: M1 amplifies at every rank, "
            "most at small rank, less as r grows past d (M tends to I): the caveat holds the paper's 'when the rank "
            "is large' against that. A published, the threat model of a LoRA "
            "checkpoint, is a setting paper B does not claim: it is B-3.published-A's row.",
        )
    )
    out.append(
        Claim(
            claim_id="B-3.published-A",
            scale=scale.name,
            checks=[
                check_bound(
                    f"A published, r={r}: delta(1) at least the noise alone's",
                    base.loc[r, "delta_m1_published_A"],
                    base.loc[r, "delta_noise_alone"],
                    direction=">=",
                )
                for r in base.index
            ],
            summary=f"vector queries, d = {d}, rho = {base.rho.iloc[0]}, mu = {MU:g}: at eps = 1, delta with A "
            "published is "
            + ", ".join(f"{base.loc[r, 'delta_m1_published_A']:.3g} (r = {r})" for r in base.index)
            + f" against {base.delta_noise_alone.iloc[0]:.3g} for the noise alone",
            note="The book's own test, beyond paper B: given A, M1 is the Gaussian mechanism with sensitivity |M dv|, "
            "of mean square (1 + (d+1)/r) |dv|^2, so the projection inflates the sensitivity instead of hiding it, "
            "most at small rank.",
        )
    )

    checks = []
    for row in m2[m2["r"] < m2["d"]].itertuples():
        checks.append(
            check_bound(
                f"M2, r={row.r}, {row.steps} step(s), fresh A: eps at least 5% below the noise alone's",
                row.eps_m2_fresh_A,
                0.95 * row.eps_noise_alone,
            )
        )
    checks += [c for c in out[1].checks if c.role == "core"]  # B-3.m1's gains, A secret
    top = m2[(m2["steps"] == m2["steps"].max()) & (m2["r"] < m2["d"])]
    out.append(
        Claim(
            claim_id="B-3.stronger",
            scale=scale.name,
            checks=checks + instruments,
            summary="M2 with a fresh A each step certifies eps "
            + ", ".join(f"{row.eps_m2_fresh_A:.3g} (r = {int(row.r)})" for row in top.itertuples())
            + f" against {top.eps_noise_alone.iloc[0]:.3g} for the noise alone after {int(top.steps.iloc[0])} steps; "
            "M1 with A secret beats the noise alone at every rank tried (A published: B-3.published-A)",
            note="M2 is a post-processing of the noise alone's release, so it is never less private; the checks ask "
            "for a gain of at least 5%. The certificates assume a fresh A at every step. LoRA freezes A, and then the "
            "releases reveal A's row space (after r steps exactly), differences that depend on past releases may lie "
            "in it, and the guarantee that certifies such a release is the noise alone's, whether A is published or "
            "not. At r >= d the projection is the identity and nothing is gained.",
        )
    )
    return out


def key_numbers(ratios: pd.DataFrame, m2: pd.DataFrame, m1: pd.DataFrame) -> dict[str, float]:
    """The numbers the chapter's takeaway quotes (glued by the notebook)."""
    small = ratios.iloc[0]
    t_max = int(m2["steps"].max())
    row = m2[(m2["r"] == small.r) & (m2["steps"] == t_max)].iloc[0]
    one = m2[(m2["r"] == small.r) & (m2["steps"] == 1)].iloc[0]
    m1_1 = m1[m1["eps"] == 1.0].set_index("r")
    r_small = int(m1_1.index.min())
    big = m2[(m2["r"] < small.d) & (m2["steps"] == t_max)].sort_values("r").iloc[-1]  # the largest rank below d
    numbers = {
        "r": small.r,
        "d": small.d,
        "steps": t_max,
        "eps_noise_1": one.eps_noise_alone,
        "eps_m2_1": one.eps_m2_fresh_A,
        "eps_noise_T": row.eps_noise_alone,
        "eps_fresh_T": row.eps_m2_fresh_A,
        "eps_frozen_T": row.eps_m2_frozen_A_fixed_difference,
        "r_big": big.r,
        "saving_big": 1 - big.eps_m2_fresh_A / big.eps_noise_alone,
        "kappa_one": small.kappa_1_step,
        "kappa_fresh": small.kappa_100_fresh,
        "kappa_frozen": small.kappa_100_frozen,
        "m1_r": r_small,
        "m1_noise": m1_1.loc[r_small, "delta_noise_alone"],
        "m1_secret": m1_1.loc[r_small, "delta_m1_secret_A"],
        "m1_published": m1_1.loc[r_small, "delta_m1_published_A"],
    }
    return quoted_numbers(KEY, numbers)


# ------------------------------------------------ DP training of five weight sets (B-3.lowrank, B-3.accuracy)

DP_RESULTS = "results/published/dp_compare/{scale}"
REGENERATE_DP = regenerate("dp-compare")
WEIGHT_LABELS = {
    "full": "full (all but wpe)",
    "adapter": "adapter (c_attn, full rank)",
    "lorafa": "LoRA-FA (B, A frozen)",
    "lora": "LoRA (A and B)",
    "compressed": "compressed (c_attn, fresh rank-8 projection)",
}
PAIRS = (
    ("lorafa", "full"),
    ("lorafa", "adapter"),
    ("compressed", "full"),
    ("compressed", "lorafa"),
    ("compressed", "adapter"),
)
# Paper B's Fig. 5 (../shared/papers/wishart-projection-notes.md): its eps axis runs from 0.12 to 0.81; there
# compressed DP-SGD is ahead of DP-LoRA-FA at every eps and rank, and clearly ahead of DP-SGD only below about 0.2
# (level or less than a point ahead from 0.28 to 0.6, behind at 0.81; FIG5_BY_EPS, a test holds the two).
# Certificates in FIG5_EPS are the accuracy claim's core.
FIG5_EPS = (0.1, 1.0)
# Paper B's Fig. 5 as its authors published it (ResNet-50 fine-tuned privately on CIFAR-10, test accuracy in %, read
# off the vector figure of the authors' post, hu2026blog): the published reference for B-3.accuracy.
FIG5_BY_RANK = pd.DataFrame(
    [
        ("compressed DP-SGD (M2)", 0.2, 72.7, 76.8, 79.7, 81.1, 82.1, 81.6),
        ("DP-LoRA-FA", 0.2, 65.0, 72.7, 76.9, 79.8, 81.0, 81.2),
        ("compressed DP-SGD (M2)", 0.4, 73.5, 77.0, 80.6, 82.7, 83.6, 84.1),
        ("DP-LoRA-FA", 0.4, 65.4, 74.0, 78.8, 81.4, 82.9, 82.6),
    ],
    columns=["method", "eps", "r = 32", "r = 64", "r = 128", "r = 256", "r = 512", "r = 700"],
)
FIG5_BY_EPS = pd.DataFrame(  # at one rank and delta, which the figure does not state
    [
        ("DP-SGD", 80.2, 81.1, 82.7, 83.3, 84.2, 84.8),
        ("DP-LoRA-FA", 80.4, 81.1, 82.1, 82.7, 83.3, 83.7),
        ("compressed DP-SGD (M2)", 81.3, 82.0, 82.7, 83.8, 84.2, 84.5),
    ],
    columns=["method", "eps 0.12", "eps 0.17", "eps 0.28", "eps 0.39", "eps 0.60", "eps 0.81"],
)
DPSGD_LEAD_EPS = 0.2
# Fig. 5's private models keep most of what fine-tuning gains; a DP-trained weight set that keeps less than this
# share of its own gain without noise (in perplexity below the base model) has barely moved
LEARNS_SHARE = 0.5
# "adds less noise": compressed DP-SGD's added noise multiplier at most this fraction of DP-SGD's at equal eps
LESS_NOISE = 0.9
# the analysis plan's power condition (version 1): non-private fine-tuning lowers the held-out perplexity at least
# this fraction below the base model's, or the runs cannot test an accuracy claim
POWER_GAIN = 0.05
PAIRED_RESAMPLES = 1000


def reading_numbers() -> dict[str, float]:
    """The thresholds by which B-3.accuracy reads paper B's claim, for the page to quote rather than type."""
    return quoted_numbers(
        KEY,
        {
            "fig5_eps_low": FIG5_EPS[0],
            "fig5_eps_high": FIG5_EPS[1],
            "dpsgd_lead_eps": DPSGD_LEAD_EPS,
            "learns_share": LEARNS_SHARE,
            "less_noise": 1 - LESS_NOISE,
            "power_gain": POWER_GAIN,
        },
    )


def load_dp_records(scale_name: str, folder=None) -> list[dict]:
    """The committed records of ``mia.dp_compare`` (checksums verified)."""
    from pathlib import Path

    from ..ledger import ledger_dir
    from ..mia.experiments import dp_compare

    folder = Path(folder) if folder is not None else ledger_dir().parent / DP_RESULTS.format(scale=scale_name)
    if not folder.is_dir():
        raise FileNotFoundError(f"no DP comparison at {folder}; regenerate it with: {REGENERATE_DP}")
    return dp_compare.load(folder)


def load_dp_compare(scale_name: str, folder=None) -> pd.DataFrame:
    """The committed DP runs as ``mia.dp_compare.summary``'s frame: one row per weight set, noise and seed."""
    return dp_compare_frame(load_dp_records(scale_name, folder))


def dp_compare_frame(records: list[dict]) -> pd.DataFrame:
    """``mia.dp_compare.summary`` of ``records``: one row per weight set, noise and seed."""
    from ..mia.experiments import dp_compare

    return dp_compare.summary(records)


def dp_means(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per noise and weight set: means over seeds, with the seeds' range of the reference attack's AUC
    as ``reference_low`` and ``reference_high`` (the figure's bars) and the perplexities' standard deviation."""
    grouped = frame.groupby(["noise", "weights"], sort=False)
    out = grouped.agg(
        trainable=("trainable", "first"),
        epsilon=("epsilon", "first"),
        noise_used=("noise_used", "first"),
        seeds=("seed", "nunique"),
        perplexity=("perplexity", "mean"),
        perplexity_sd=("perplexity", "std"),
        reference_auc=("reference_auc", "mean"),
        reference_low=("reference_auc", "min"),
        reference_high=("reference_auc", "max"),
        loss_auc=("loss_auc", "mean"),
        rates=("lr", lambda v: ", ".join(f"{x:g}" for x in sorted(set(v)))),
    )
    return out.reset_index()


def dp_table(frame: pd.DataFrame) -> pd.DataFrame:
    """The runs as the page shows them, averaged over seeds: the certificate, the noise trained with, utility
    and both attacks."""
    means = dp_means(frame)

    def noise(row) -> str:
        return f"{row.noise:g}" if row.noise_used == row.noise else f"{row.noise_used:.3g} (matches {row.noise:g})"

    return pd.DataFrame(
        {
            "sigma trained": [noise(r) for r in means.itertuples()],
            "weights trained": means["weights"].map(WEIGHT_LABELS),
            "trainable": means["trainable"],
            "eps": means["epsilon"].map(lambda e: "none (no noise)" if pd.isna(e) else f"{e:.2f}"),
            "seeds": means["seeds"],
            "rates chosen": means["rates"],
            "perplexity (mean ± sd)": [f"{r.perplexity:.2f} ± {r.perplexity_sd:.2f}" for r in means.itertuples()],
            "reference AUC, mean [seeds' range]": [
                f"{r.reference_auc:.3f} [{r.reference_low:.3f}, {r.reference_high:.3f}]" for r in means.itertuples()
            ],
            "loss AUC (mean)": means["loss_auc"].round(3),
        }
    )


def _attack_signals(record: dict, attack: str) -> tuple[np.ndarray, np.ndarray]:
    from ..mia.attacks import metrics as mia_metrics

    losses = record["metrics"]["text_losses"]
    target = {part: np.asarray(losses["target"][part]) for part in ("members", "nonmembers")}
    if attack == "loss":
        return target["members"], target["nonmembers"]
    if attack != "reference":
        raise ValueError(f"unknown attack {attack!r}; choose 'reference' or 'loss'")
    reference = {part: np.asarray(losses["reference"][part]) for part in ("members", "nonmembers")}
    return tuple(mia_metrics.reference_signal(target[p], reference[p]) for p in ("members", "nonmembers"))


def paired_runs(records: list[dict], first: str, second: str, sigma: float) -> list[tuple[dict, dict]]:
    """(first's record, second's record) for every seed both were trained with at one noise multiplier, each pair
    checked to have scored the same texts."""
    cells = {(r["cell"]["weights"], r["cell"]["noise"], r["cell"]["seed"]): r for r in records}
    seeds = sorted(
        {s for w, z, s in cells if w == first and z == sigma} & {s for w, z, s in cells if w == second and z == sigma}
    )
    if not seeds:
        raise ValueError(
            f"no seed has runs of both {first} and {second} at sigma = {sigma:g}; regenerate them with: {REGENERATE_DP}"
        )
    pairs = []
    for s in seeds:
        a, b = cells[first, sigma, s], cells[second, sigma, s]
        if a["manifest"]["split_hashes"] != b["manifest"]["split_hashes"]:
            raise ValueError(f"{first} and {second} at sigma = {sigma:g}, seed {s} scored different texts: no pairing")
        pairs.append((a, b))
    return pairs


PAIRED_COLUMNS = ("sigma", "first", "second", "attack", "seeds", "difference", "low", "high", "seed_min", "seed_max")


def _paired_interval(
    records: list[dict], first: str, second: str, sigma: float, signals, metric, stream: int, resamples: int, seed: int
) -> dict:
    """``metric(first) - metric(second)`` at one noise multiplier over the seeds both ran (``signals(record)``: a
    record's (members, non-members)), with the 95% interval of the two-stage paired bootstrap
    (``metrics.paired_difference``: seeds drawn with replacement, then each drawn seed's members and non-members,
    the same texts for both, so that the texts' variation cancels and the seeds' stays in) and the seeds' own
    differences beside it."""
    from ..mia.attacks import metrics as mia_metrics
    from ..mia.experiments.dp_compare import WEIGHT_SETS

    arms = [mia_metrics.Arms(signals(a), signals(b)) for a, b in paired_runs(records, first, second, sigma)]
    rng = rng_for(seed, stream, WEIGHT_SETS.index(first), WEIGHT_SETS.index(second), int(round(1000 * sigma)))
    interval = mia_metrics.paired_difference(metric, arms, rng, resamples)
    observed = [metric(*arm.a) - metric(*arm.b) for arm in arms]
    return {
        "sigma": sigma,
        "first": first,
        "second": second,
        "seeds": len(arms),
        "texts": int(arms[0].a[1].size),
        "difference": interval.value,
        "low": interval.low,
        "high": interval.high,
        "seed_min": float(min(observed)),
        "seed_max": float(max(observed)),
    }


def paired_difference(
    records: list[dict],
    first: str,
    second: str,
    sigma: float,
    attack: str = "reference",
    resamples: int = PAIRED_RESAMPLES,
    seed: int = 0,
) -> dict:
    """AUC(first) - AUC(second) of ``attack`` at one noise multiplier, averaged over the seeds both were trained
    with, with the paired two-stage interval over seeds and texts (:func:`_paired_interval`)."""
    from ..mia.attacks import metrics as mia_metrics

    row = _paired_interval(
        records,
        first,
        second,
        sigma,
        lambda record: _attack_signals(record, attack),
        mia_metrics.roc_auc,
        31,
        resamples,
        seed,
    )
    return {k: attack if k == "attack" else row[k] for k in PAIRED_COLUMNS}


def paired_table(records: list[dict], pairs=PAIRS, resamples: int = PAIRED_RESAMPLES) -> pd.DataFrame:
    """:func:`paired_difference` of the reference attack for every pair of weight sets, at every noise with both."""
    present = {(r["cell"]["weights"], r["cell"]["noise"]) for r in records}
    rows = [
        paired_difference(records, a, b, z, resamples=resamples)
        for z in sorted({z for _, z in present})
        for a, b in pairs
        if (a, z) in present and (b, z) in present
    ]
    return rounded_frame(pd.DataFrame(rows), 4)


def heldout_loss(members: np.ndarray, nonmembers: np.ndarray) -> float:
    """A model's held-out loss: its mean per-text loss on the non-members, texts that no model of the cell
    trained on (the target trains on the members, its reference and rate sweep on the auxiliary part)."""
    return float(np.mean(nonmembers))


HELDOUT_AGAINST = ("lorafa", "full", "adapter")


def heldout_difference(
    records: list[dict], first: str, second: str, sigma: float, resamples: int = PAIRED_RESAMPLES, seed: int = 0
) -> dict:
    """Held-out loss (:func:`heldout_loss`) of ``first`` minus ``second``'s at one noise multiplier, averaged over
    the seeds both ran, with the paired two-stage interval over seeds and texts (:func:`_paired_interval`)."""

    def losses(record: dict) -> tuple[np.ndarray, np.ndarray]:
        target = record["metrics"]["text_losses"]["target"]
        return np.asarray(target["members"]), np.asarray(target["nonmembers"])

    return _paired_interval(records, first, second, sigma, losses, heldout_loss, 37, resamples, seed)


def heldout_table(records: list[dict], resamples: int = PAIRED_RESAMPLES) -> pd.DataFrame:
    """:func:`heldout_difference` of compressed DP-SGD against each of ``HELDOUT_AGAINST`` at every noise with
    both, with DP-SGD's certified eps there."""
    frame = dp_compare_frame(records)
    rows = [
        {
            "eps": float(_dpsgd_run(frame, z)["epsilon"]),
            **heldout_difference(records, "compressed", other, z, resamples),
        }
        for z in sorted(frame.loc[frame["weights"] == "compressed", "noise"].unique())
        for other in HELDOUT_AGAINST
    ]
    return rounded_frame(pd.DataFrame(rows), 4)


def nonprivate_gain(frame: pd.DataFrame, weights: str, base_ppl: float) -> float:
    """How far fine-tuning ``weights`` without noise lowers the held-out (validation) perplexity below the base
    model's, as a fraction of the base's: 1 - ppl / base, the mean over seeds (the analysis plan's power measure)."""
    means = dp_means(frame).set_index(["noise", "weights"])
    if (0.0, weights) not in means.index:
        raise ValueError(f"no run of {weights} without noise; regenerate them with: {REGENERATE_DP}")
    return 1.0 - float(means.loc[(0.0, weights), "perplexity"]) / base_ppl


def learned_share(frame: pd.DataFrame, weights: str, sigma: float, base_ppl: float) -> float:
    """The share of a weight set's perplexity gain over the base model (``base_ppl``) that it keeps under DP-SGD
    at ``sigma``: (base - ppl at sigma) / (base - ppl without noise), means over seeds (nan where training
    without noise gained nothing)."""
    means = dp_means(frame).set_index(["noise", "weights"])
    for z in (0.0, sigma):
        if (z, weights) not in means.index:
            raise ValueError(f"no run of {weights} at sigma = {z:g}; regenerate them with: {REGENERATE_DP}")
    gain = base_ppl - float(means.loc[(0.0, weights), "perplexity"])
    kept = base_ppl - float(means.loc[(sigma, weights), "perplexity"])
    return kept / gain if gain > 0 else math.nan


def _row(paired: pd.DataFrame, first: str, second: str, sigma: float) -> pd.Series:
    hit = paired[(paired["first"] == first) & (paired["second"] == second) & (paired["sigma"] == sigma)]
    if hit.empty:
        raise ValueError(
            f"no paired comparison of {first} and {second} at sigma = {sigma:g}; regenerate them with: {REGENERATE_DP}"
        )
    return hit.iloc[0]


def _dpsgd_run(frame: pd.DataFrame, sigma: float) -> pd.Series:
    """The first full fine-tuning run at ``sigma``: DP-SGD's certificate there (one for every plain weight set)."""
    return frame[(frame["noise"] == sigma) & (frame["weights"] == "full")].iloc[0]


def _noisy_sigmas(frame: pd.DataFrame) -> list[float]:
    sigmas = sorted(s for s in frame["noise"].unique() if s > 0)
    if not sigmas:
        raise ValueError(f"the DP runs hold no noise multiplier above 0: {REGENERATE_DP}")
    return sigmas


def lowrank_claim(frame: pd.DataFrame, paired: pd.DataFrame, m2: pd.DataFrame, settings: dict, scale: Scale) -> Claim:
    """Ledger entry for "low-rank fine-tuning can be more private than full fine-tuning at the same noise".

    Evidence: M2's certificate (a low-rank mechanism that is more private at the same noise), also in the
    training's own setting (``settings``: :func:`compressed_settings`; compressed DP-SGD at DP-SGD's noise,
    by RDP) and, as caveats,
    whether the reference attack, compared text by text over the seeds, puts LoRA-FA below full fine-tuning and
    below the same matrices trained at full rank, at each noise.  That DP-SGD certifies one eps whatever it
    trains is an identity, shown, not counted."""
    sigmas = _noisy_sigmas(frame)
    projected = m2[m2["r"] < m2["d"]]
    fresh = projected[projected["r"] == projected["r"].min()].sort_values("steps").iloc[-1]  # smallest rank, longest
    checks = [
        check_bound(
            f"M2 with a fresh A, r={int(fresh.r)}, {int(fresh.steps)} steps: eps at least 5% below the noise alone's",
            fresh.eps_m2_fresh_A,
            0.95 * fresh.eps_noise_alone,
        )
    ]
    for sigma in sigmas:
        plain = float(_dpsgd_run(frame, sigma)["epsilon"])
        checks.append(
            check_bound(
                f"the training's setting at sigma={sigma:g}: compressed DP-SGD (fresh rank-{settings['rank']} A, "
                f"d={settings['d']}) certifies at least 5% less than DP-SGD at the same noise (RDP, any difference)",
                noisy.m2_rdp_epsilon(
                    DELTA, sigma, settings["sample_rate"], settings["steps"], settings["d"], settings["rank"]
                ),
                0.95 * plain,
            )
        )
        for high, label in (("full", "full fine-tuning's"), ("adapter", "the same matrices' at full rank")):
            row = _row(paired, "lorafa", high, sigma)
            checks.append(
                check_bound(
                    f"DP-SGD at sigma={sigma:g}: LoRA-FA's reference-attack AUC below {label} (mean difference over "
                    f"{int(row.seeds)} seeds, paired 95% interval over seeds and texts)",
                    float(row.difference),
                    0.0,
                    role="caveat",
                    interval=(float(row.low), float(row.high)),
                )
            )
        eps = frame[(frame["noise"] == sigma) & frame["weights"].isin(("full", "adapter", "lorafa", "lora"))]["epsilon"]
        checks.append(
            check_close(
                f"DP-SGD at sigma={sigma:g}: one certified eps for every weight set",
                float(eps.max()),
                float(eps.min()),
                rtol=1e-12,
                role="identity",
            )
        )
    means = dp_means(frame)
    mid_sigma = sigmas[len(sigmas) // 2]
    mid = means[(means["noise"] == mid_sigma) & (means["weights"] != "compressed")].set_index("weights")
    return Claim(
        claim_id="B-3.lowrank-more-private",
        scale=scale.name,
        checks=checks,
        summary=f"at sigma = {mid_sigma:g} DP-SGD certifies eps = {mid.loc['full', 'epsilon']:.3g} whichever weights "
        "it trains; mean reference-attack AUC over "
        f"{int(mid['seeds'].min())} seeds: "
        + ", ".join(f"{WEIGHT_LABELS[w].split(' (')[0]} {mid.loc[w, 'reference_auc']:.3f}" for w in mid.index)
        + f" at perplexities {mid['perplexity'].min():.1f} to {mid['perplexity'].max():.1f}; M2 with a fresh A "
        f"(r = {int(fresh.r)}) certifies {fresh.eps_m2_fresh_A:.3g} where the noise alone gives "
        f"{fresh.eps_noise_alone:.3g}",
        note="What the checks test: the core checks are about compressed DP-SGD and M2, a low-rank mechanism "
        "with a fresh random A at every step, not about LoRA; they read the claim as 'a low-rank mechanism can "
        "certify more privacy at the same noise'. Whether LoRA itself (A frozen, DP-SGD on B) is more private at "
        "the same noise is tested only by the caveats, by attack, since its certificate is DP-SGD's. Two readings. "
        "As a certificate: DP-SGD's accountant sees the clipping norm, the noise and the "
        "sampling, not the number of weights, so at the same noise DP LoRA (A frozen or not) certifies exactly "
        "what DP full fine-tuning does; a smaller eps at the same noise needs another mechanism, such as M2's "
        "fresh projection after the noise (B-3.accuracy). As a measurement: the reference attack on the trained "
        "models on Penn Treebank, references trained with noise of their own, compared text by text (a paired "
        "bootstrap, averaged over the seeds); the interval resamples the seeds and then the members and "
        "non-members, so it holds the seeds' variation, which two seeds only sample. Compressed DP-SGD "
        "at the same noise (B-3.accuracy's mechanism, a fresh A each step) certifies far less: the low-rank "
        "projection is more private when the accounting sees it and A is fresh.",
    )


def update_noise(noise_multiplier: float, d: int, r: int) -> float:
    """Per-coordinate standard deviation (in units of C) of the noise in compressed DP-SGD's update, M E:
    E[M^2] = (1 + (d + 1) / r) I for M = A^T A (Wishart W_d(I/r, r)), so sigma sqrt(1 + (d + 1) / r)."""
    return noise_multiplier * math.sqrt(1 + (d + 1) / r)


def compressed_table(records: list[dict]) -> pd.DataFrame:
    """One row per DP-SGD certificate matched: plain DP-SGD's noise and eps, compressed DP-SGD's added noise, its
    certificate (RDP, any difference) and the tighter rank-one figure, the noise in its update, and the mean
    perplexity over seeds of compressed DP-SGD, full fine-tuning, DP-LoRA-FA and the same matrices under DP-SGD."""
    frame = dp_compare_frame(records)
    settings = compressed_settings(records)
    means = dp_means(frame).set_index(["noise", "weights"])
    rows = []
    for r in records:
        cell, training = r["cell"], r["metrics"]["training"]
        if cell["weights"] != "compressed" or cell["seed"] != min(frame["seed"]):
            continue
        z = cell["noise"]
        rows.append(
            {
                "DP-SGD sigma": z,
                "DP-SGD eps (PRV)": training["matched_epsilon"],
                "compressed: added sigma": training["noise_multiplier"],
                "eps (RDP, any difference)": training["epsilon"],
                "eps (PLD, rank-one difference)": training["epsilon_rank_one"],
                "update noise per coordinate": update_noise(
                    training["noise_multiplier"], settings["d"], settings["rank"]
                ),
                **{
                    f"perplexity: {w}": means.loc[(z, w), "perplexity"]
                    for w in ("compressed", "full", "lorafa", "adapter")
                },
            }
        )
    return rounded_frame(pd.DataFrame(rows).sort_values("DP-SGD sigma").reset_index(drop=True), 4)


def accuracy_claim(frame: pd.DataFrame, heldout: pd.DataFrame, settings: dict, scale: Scale, base_ppl: float) -> Claim:
    """Ledger entry for "tighter accounting lets DP fine-tuning use less noise for the same privacy, and so reach
    a better accuracy", read as paper B's Fig. 5 shows it (``FIG5_EPS``, ``DPSGD_LEAD_EPS``).

    At each DP-SGD certificate eps: compressed DP-SGD's added noise multiplier is at least 10% lower for the same
    eps (its certificate: Renyi DP for a difference of any rank); its held-out loss (``heldout``:
    :func:`heldout_table`, compared text by text, the interval over seeds and texts) is below DP-LoRA-FA's; and
    below DP-SGD's on all weights where eps < ``DPSGD_LEAD_EPS``.  These are core where eps lies in Fig. 5's range
    and caveats outside it; the comparison with DP-SGD at eps >= ``DPSGD_LEAD_EPS`` is a caveat, since Fig. 5 puts
    DP-SGD ahead there.  Caveats: the same matrices under plain DP-SGD (like for like), whether the noise in the
    update itself is smaller too, and, in Fig. 5's range, whether the DP-trained models learn the task at all
    (DP-LoRA-FA keeps ``LEARNS_SHARE`` of its gain without noise over the base model's ``base_ppl``).
    ``settings``: :func:`compressed_settings` of the runs."""
    sigmas = _noisy_sigmas(frame)
    comp = frame[frame["weights"] == "compressed"]
    if comp.empty:
        raise ValueError(f"the DP runs hold no compressed DP-SGD: {REGENERATE_DP}")
    in_range = []
    checks = []
    for sigma in sigmas:
        at = comp[comp["noise"] == sigma]
        if at.empty:
            raise ValueError(f"no compressed DP-SGD matching sigma = {sigma:g}: {REGENERATE_DP}")
        eps = float(_dpsgd_run(frame, sigma)["epsilon"])
        role = "core" if FIG5_EPS[0] <= eps <= FIG5_EPS[1] else "caveat"
        if role == "core":
            in_range.append(sigma)
        used = float(at["noise_used"].iloc[0])
        checks += [
            check_bound(
                f"eps = {eps:.3g} (DP-SGD at sigma={sigma:g}): compressed DP-SGD's added noise multiplier at least "
                f"{1 - LESS_NOISE:.0%} lower",
                used,
                LESS_NOISE * sigma,
                role=role,
            ),
            check_bound(
                f"eps = {eps:.3g}: compressed DP-SGD's own certificate within DP-SGD's",
                float(at["epsilon"].max()),
                eps,
                role="instrument",
            ),
            check_bound(
                f"eps = {eps:.3g}: the noise in compressed DP-SGD's update, sigma sqrt(1 + (d+1)/r), not above "
                "DP-SGD's sigma",
                update_noise(used, settings["d"], settings["rank"]),
                sigma,
                role="caveat",
            ),
        ]
        for other, label, other_role in (
            ("lorafa", "DP-LoRA-FA's", role),
            ("full", "DP-SGD's on all weights", role if eps < DPSGD_LEAD_EPS else "caveat"),
            ("adapter", "the same matrices' under DP-SGD", "caveat"),
        ):
            row = _row(heldout, "compressed", other, sigma)
            checks.append(
                check_bound(
                    f"eps = {eps:.3g}: compressed DP-SGD's held-out loss below {label} (mean difference over "
                    f"{int(row.seeds)} seeds, 95% interval over seeds and texts)",
                    float(row.difference),
                    0.0,
                    role=other_role,
                    interval=(float(row.low), float(row.high)),
                )
            )
        if role == "core":
            checks.append(
                check_bound(
                    f"eps = {eps:.3g}: the DP-trained models learn the task (DP-LoRA-FA keeps at least "
                    f"{LEARNS_SHARE:.0%} of its perplexity gain over the base model without noise)",
                    learned_share(frame, "lorafa", sigma, base_ppl),
                    LEARNS_SHARE,
                    direction=">=",
                    role="caveat",
                )
            )
    if not in_range:
        raise ValueError(
            f"no DP run certifies an eps in paper B's Fig. 5 range {FIG5_EPS}: the claim is not tested; "
            f"add a larger noise multiplier and regenerate with: {REGENERATE_DP}"
        )
    checks.append(  # the analysis plan's power condition (version 1): without it the claim is not tested here
        check_bound(
            f"the runs have power: fine-tuning without noise (DP-LoRA-FA's weights) lowers the held-out perplexity "
            f"at least {POWER_GAIN:.0%} below the base model's (the analysis plan's power condition)",
            nonprivate_gain(frame, "lorafa", base_ppl),
            POWER_GAIN,
            direction=">=",
            role="power",
        )
    )
    z = in_range[-1]  # the largest eps in Fig. 5's range
    means = dp_means(frame).set_index(["noise", "weights"])
    row = _row(heldout, "compressed", "lorafa", z)
    used = means.loc[(z, "compressed"), "noise_used"]
    return Claim(
        claim_id="B-3.accuracy",
        scale=scale.name,
        checks=checks,
        plan_version=1,
        # version 0, which had no power condition, read the same evidence without it: shown beside the verdict
        readings=[Reading("plan version 0 (no power condition)", [c for c in checks if c.role != "power"], 0)],
        summary=f"at eps = {means.loc[(z, 'full'), 'epsilon']:.3g} compressed DP-SGD (rank {settings['rank']} of "
        f"{settings['d']}) adds noise sigma = {used:.3g} instead of {z:g} (in its update: "
        f"{update_noise(used, settings['d'], settings['rank']):.3g}); "
        f"its held-out loss minus DP-LoRA-FA's {row.difference:+.4f} [{row.low:+.4f}, {row.high:+.4f}]; mean "
        f"perplexity {means.loc[(z, 'compressed'), 'perplexity']:.2f} against DP-LoRA-FA "
        f"{means.loc[(z, 'lorafa'), 'perplexity']:.2f}, full {means.loc[(z, 'full'), 'perplexity']:.2f} and the base "
        f"model {base_ppl:.2f}; DP-LoRA-FA keeps {learned_share(frame, 'lorafa', z, base_ppl):.0%} of its gain "
        "without noise",
        note="Compressed DP-SGD is paper B's M2 as a training rule: clip and noise in the full space of the adapted "
        "matrices, then a fresh secret rank-r projection per layer and step. Its certificate is Renyi DP of the "
        "joint release (A, output): given A a sampled Gaussian whose sensitivity is scaled by |P_A D| / |D|, whose "
        "Renyi moment is convex in the squared ratio, and a text's ratio is a weighted mean of Beta(r/2, (d-r)/2) "
        "ratios, so Jensen bounds any difference by one direction's; the tighter PLD figure for a rank-one "
        "difference is reported beside it, not used. It is matched to DP-SGD's PRV epsilon (conservative for "
        "compressed DP-SGD, whose RDP is looser). Less *added* noise is not less noise in the update: M E has "
        "(1 + (d+1)/r) times E's variance per coordinate, confined to a fresh r-dimensional subspace each step. "
        "The reading follows paper B's Fig. 5 (a ResNet-50 on CIFAR-10): its eps axis spans 0.12 to 0.81, where "
        "compressed DP-SGD beats DP-LoRA-FA at every eps and rank but is clearly ahead of DP-SGD only below about "
        "0.2 (level or less than a point ahead from 0.28 to 0.6, behind at 0.81), so certificates in [0.1, 1] are "
        "core, DP-SGD is a core comparison only below 0.2, and the rest are caveats. Utility is the held-out loss, "
        "the mean per-text loss on the non-members, which no model of a cell trained on, compared text by text; its "
        "interval resamples the seeds and then the texts, so it holds the seed-to-seed variation. Fig. 5's private "
        "models learn most of their task; where DP-LoRA-FA keeps less than half of its gain without noise the "
        "models compared have barely moved from the base model, and a caveat says so. Whether the runs can test "
        "the claim at all is the analysis plan's power condition (version 1): fine-tuning without noise must lower "
        "the held-out perplexity at least 5% below the base model's; where it does not, the claim is not testable "
        "here (under version 0 the same numbers read unresolved, then called qualified).",
    )


def compressed_settings(records: list[dict]) -> dict:
    """The setting of the committed compressed DP-SGD runs: sampling rate, steps, rank and input width (one for
    all runs, or a clear error)."""
    keys = ("sample_rate", "steps", "projection_rank", "input_width")
    found = {tuple(r["metrics"]["training"][k] for k in keys) for r in records if r["cell"]["weights"] == "compressed"}
    if len(found) != 1:
        raise ValueError(f"expected one setting of compressed DP-SGD among the runs, found {sorted(found)}")
    return dict(zip(("sample_rate", "steps", "rank", "d"), found.pop(), strict=True))


def edge_rate_count(records: list[dict]) -> tuple[int, int]:
    """(noisy runs whose chosen rate is an end of their grid, noisy runs): the optimum may lie beyond it."""
    noisy_runs = [r for r in records if r["cell"]["noise"] > 0]
    edges = sum(
        r["metrics"]["lr"] in (min(g), max(g)) for r in noisy_runs for g in [[s["lr"] for s in r["metrics"]["sweep"]]]
    )
    return int(edges), len(noisy_runs)


def dp_numbers(
    frame: pd.DataFrame, paired: pd.DataFrame, heldout: pd.DataFrame, records: list[dict], base_ppl: float
) -> dict[str, float]:
    """The numbers the DP section's text quotes (glued by the notebook); ``paired``: :func:`paired_table`,
    ``heldout``: :func:`heldout_table`, ``base_ppl``: the base model's."""
    edges, runs = edge_rate_count(records)
    settings = compressed_settings(records)
    numbers = {
        "dp_base_ppl": base_ppl,
        "dp_lorafa_nonprivate_gain": nonprivate_gain(frame, "lorafa", base_ppl),
        "dp_noisy_runs": runs,
        "dp_edge_rate": edges,
        "dp_seeds": int(frame["seed"].nunique()),
        "dp_rank": settings["rank"],
        "dp_d": settings["d"],
        "dp_steps": settings["steps"],
    }
    means = dp_means(frame)
    for sigma in sorted(means["noise"].unique()):
        at = means[means["noise"] == sigma].set_index("weights")
        tag = f"z{sigma:g}".replace(".", "p")
        for w in at.index:
            numbers[f"dp_{tag}_{w}_ref"] = at.loc[w, "reference_auc"]
            numbers[f"dp_{tag}_{w}_ppl"] = at.loc[w, "perplexity"]
        if sigma > 0:
            numbers[f"dp_{tag}_eps"] = at.loc["full", "epsilon"]
            numbers[f"dp_{tag}_eps_rdp"] = _dpsgd_run(frame, sigma)["epsilon_rdp"]
            if "compressed" in at.index:
                numbers[f"dp_{tag}_compressed_noise"] = at.loc["compressed", "noise_used"]
                numbers[f"dp_{tag}_compressed_eps"] = at.loc["compressed", "epsilon"]
                numbers[f"dp_{tag}_compressed_update_noise"] = update_noise(
                    at.loc["compressed", "noise_used"], settings["d"], settings["rank"]
                )
                numbers[f"dp_{tag}_compressed_rank_one"] = next(
                    r["metrics"]["training"]["epsilon_rank_one"]
                    for r in records
                    if r["cell"]["weights"] == "compressed" and r["cell"]["noise"] == sigma
                )
    for row in paired.itertuples():
        tag = f"z{row.sigma:g}".replace(".", "p")
        numbers[f"dp_{tag}_{row.first}_minus_{row.second}"] = row.difference
        numbers[f"dp_{tag}_{row.first}_minus_{row.second}_low"] = row.low
        numbers[f"dp_{tag}_{row.first}_minus_{row.second}_high"] = row.high
    for row in heldout.itertuples():
        tag = f"z{row.sigma:g}".replace(".", "p")
        for suffix, value in (("", row.difference), ("_low", row.low), ("_high", row.high)):
            numbers[f"dp_{tag}_heldout_{row.second}{suffix}"] = value
    for sigma in heldout["sigma"].unique():
        numbers[f"dp_z{sigma:g}_lorafa_share".replace(".", "p")] = learned_share(frame, "lorafa", sigma, base_ppl)
    numbers["dp_heldout_texts"] = int(heldout["texts"].iloc[0])
    numbers["dp_heldout_certificates"] = int(heldout["sigma"].nunique())
    for other, rows in heldout.groupby("second"):
        numbers[f"dp_heldout_{other}_resolved"] = sum(
            not undecided((row.low, row.high), 0.0) for row in rows.itertuples()
        )
    at = means.drop_duplicates("weights").set_index("weights")
    for w in at.index:
        numbers[f"dp_{w}_trainable"] = at.loc[w, "trainable"]
    perplexities = {k: v for k, v in numbers.items() if k.endswith("_ppl")}  # fractions of a point apart
    rest = {k: v for k, v in numbers.items() if k not in perplexities}
    return {**quoted_numbers(KEY, rest), **quoted_numbers(KEY, perplexities, digits=5)}


def base_perplexity(scale_name: str, path=None) -> float:
    """The base model's validation perplexity on the same Penn Treebank texts (seed 0), from §6's committed
    frontier record (checksum verified)."""
    from pathlib import Path

    from ..ledger import ledger_dir
    from ..store import read_record

    path = (
        Path(path)
        if path is not None
        else (ledger_dir().parent / "results" / "published" / scale_name / "frontier" / "ptb" / "base-s0.json")
    )
    if not path.is_file():
        raise FileNotFoundError(f"no base-model record at {path}; regenerate it with: {regenerate('frontier')}")
    return float(read_record(path, "frontier-base")["checkpoints"][0]["validation_perplexity"])
