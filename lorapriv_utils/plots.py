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
    sns.stripplot(data=frame, x="z", y="table", ax=ax, jitter=0.15, size=5)
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
