"""Figures shared by the notebooks (matplotlib + seaborn, deterministic styling)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns


def style() -> None:
    """The book's plot style."""
    sns.set_theme(context="notebook", style="whitegrid", palette="colorblind")


def zscore_plot(tables: dict[str, pd.DataFrame], z_max: float = 4.0):
    """Monte Carlo z-scores against closed forms, one strip per table; the band is the pass region."""
    style()
    frame = pd.concat([t.assign(table=name)[["table", "z"]] for name, t in tables.items()], ignore_index=True)
    frame = frame[np.isfinite(frame["z"])]
    fig, ax = plt.subplots(figsize=(7, 2.8))
    ax.axvspan(-z_max, z_max, color="0.92", zorder=0)
    sns.stripplot(data=frame, x="z", y="table", ax=ax, jitter=False, size=5, alpha=0.6)
    ax.axvline(0, color="0.4", lw=1)
    ax.set_xlabel("(Monte Carlo - closed form) / standard error")
    ax.set_ylabel("")
    ax.set_xlim(-1.25 * z_max, 1.25 * z_max)
    fig.tight_layout()
    return fig


def ratio_plot(frame: pd.DataFrame, x: str, y: str, xlabel: str, ylabel: str, reference: float = 1.0):
    """A ratio against a parameter on log-log axes, with the reference ratio drawn."""
    style()
    fig, ax = plt.subplots(figsize=(5, 3.4))
    ax.loglog(frame[x], frame[y], "o-", label="measured")
    ax.axhline(reference, color="0.4", ls="--", lw=1, label="paper's value")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.legend()
    fig.tight_layout()
    return fig


def drift_plot(drift: pd.DataFrame):
    """Section 2: LoRA's distance from the frozen-A dynamics against eta L, with the (eta L)^2 reference."""
    style()
    fig, ax = plt.subplots(figsize=(6, 3.8))
    sns.scatterplot(data=drift, x="eta_L", y="drift", hue="problem", style="steps", ax=ax)
    x = np.logspace(np.log10(drift["eta_L"].min()), np.log10(drift["eta_L"].max()), 50)
    ax.plot(x, x**2, color="0.4", ls="--", lw=1, label="(eta L)^2")
    ax.set(xscale="log", yscale="log", xlabel="eta L", ylabel="||W_LoRA - W_frozen|| / ||W_frozen - W0||")
    ax.legend(fontsize=8, ncol=2)
    fig.tight_layout()
    return fig


def adversarial_plot(adv: pd.DataFrame):
    """Section 2: ||f_A(T)|| for rotating gradient sequences against Theorem 2.1's bound."""
    style()
    fig, ax = plt.subplots(figsize=(6, 3.6))
    for (angle, lr), part in adv.groupby(["angle", "lr"]):
        line = ax.plot(part["steps"], part["f_a_norm"], "o-", label=f"angle {angle}, eta {lr}")[0]
        ax.plot(part["steps"], part["f_a_bound"], ls=":", color=line.get_color())
    ax.set(xscale="log", yscale="log", xlabel="steps T", ylabel="||f_A(T)||_2 (dotted: bound)")
    ax.legend(fontsize=7, ncol=3)
    fig.tight_layout()
    return fig


def noise_histograms(samples: dict[str, np.ndarray], limit_pdf=None):
    """Section 3: standardised histograms and normal QQ plots of noise samples."""
    from scipy import stats

    style()
    fig, axes = plt.subplots(2, len(samples), figsize=(3.2 * len(samples), 5.6), squeeze=False)
    grid = np.linspace(-5, 5, 400)
    for k, (label, u) in enumerate(samples.items()):
        z = (u - u.mean()) / u.std()
        ax = axes[0, k]
        ax.hist(z, bins=200, range=(-5, 5), density=True, histtype="stepfilled", color="0.75", label="samples")
        ax.plot(grid, stats.norm.pdf(grid), label="N(0, 1)")
        if limit_pdf is not None and label in limit_pdf:
            ax.plot(grid, limit_pdf[label](grid), ls="--", label="exact law")
        ax.set(title=label, yscale="log", ylim=(1e-5, 1))
        ax.legend(fontsize=7)
        probs = (np.arange(1, 200) - 0.5) / 199
        axes[1, k].plot(stats.norm.ppf(probs), np.quantile(z, probs), ".")
        axes[1, k].plot([-3, 3], [-3, 3], color="0.4", lw=1)
        axes[1, k].set(xlabel="normal quantile", ylabel="sample quantile")
    fig.tight_layout()
    return fig


def kurtosis_plot(kurt: pd.DataFrame):
    """Section 3: exact excess kurtosis of one noise element against m, per rank, with the 6/r limits."""
    style()
    fig, ax = plt.subplots(figsize=(6, 3.6))
    for r, part in kurt.groupby("r"):
        line = ax.plot(part["m"], part["excess_kurtosis"], "o-", label=f"r = {r}")[0]
        ax.axhline(6 / r, color=line.get_color(), ls=":", lw=1)
    ax.set(xscale="log", yscale="log", xlabel="m", ylabel="excess kurtosis (dotted: 6/r)")
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    return fig


def distance_plot(table: pd.DataFrame, limits: pd.DataFrame):
    """Section 4: exact TV distance against m per rank, with eq. 46's bound; and the limit against r."""
    style()
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(10, 3.8))
    for r, part in table.groupby("r"):
        line = ax.plot(part["m"], part["tv"], "o-", label=f"r = {r}")[0]
        ax.plot(part["m"], part["bound_eq46"], ls=":", color=line.get_color())
    ax.set(xscale="log", yscale="log", xlabel="m", ylabel="TV to N(0, ||q||^2/r) (dotted: eq. 46)")
    ax.legend(fontsize=7, ncol=2)
    ax2.loglog(limits["r"], limits["tv_limit"], "o-", label="limit m -> infinity")
    ax2.loglog(limits["r"], limits["tv_limit"].iloc[0] / np.sqrt(limits["r"]), ls="--", label="claimed r^(-1/2)")
    ax2.set(xlabel="r", ylabel="TV")
    ax2.legend(fontsize=8)
    fig.tight_layout()
    return fig
