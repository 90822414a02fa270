"""Figures shared by the notebooks (matplotlib + seaborn, deterministic styling).

Every figure uses one style (seaborn's white grid, the colour-blind palette, 150 dpi),
mathematical notation in its labels, and legends outside the data.  :func:`save_figure`
writes a chapter's key figure as a byte-stable SVG into ``book/figures/`` so that the
chapter page can show it beside the text that discusses it.
"""

from __future__ import annotations

import io
import math
import re
from dataclasses import dataclass
from pathlib import Path

import matplotlib as mpl
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

from .files import atomic_write_text
from .labels import RULES

DPI = 150
FIGURES_DIR = Path("book") / "figures"


def style() -> None:
    """The book's plot style."""
    sns.set_theme(context="notebook", style="whitegrid", palette="colorblind")
    mpl.rcParams["figure.dpi"] = DPI
    mpl.rcParams["savefig.dpi"] = DPI


def _ticks_at(axis, values) -> None:
    """Label a log axis at the data's own values (a log axis over one or two decades otherwise crowds)."""
    from matplotlib.ticker import NullFormatter, ScalarFormatter

    axis.set_ticks(sorted(set(values)))
    axis.set_major_formatter(ScalarFormatter())
    axis.set_minor_formatter(NullFormatter())


def _tex_number(x: float) -> str:
    """A number for a mathtext label: a power of ten as 10^{k}, anything else as %g."""
    k = math.log10(x) if x > 0 else math.nan
    return f"10^{{{round(k)}}}" if math.isfinite(k) and abs(k - round(k)) < 1e-12 else f"{x:g}"


@dataclass(frozen=True)
class Look:
    """How one method's variant is drawn in every figure of the book: its colour, line style and marker."""

    colour: str
    ls: str = "-"
    marker: str = "o"


# The book's palette, one row per method (LoRA: per rank): Okabe and Ito's colour-blind-safe colours, with Tol's wine
# for the eighth; full fine-tuning's variant in full's orange family; LoRA's ranks in one blue hue, lighter for
# smaller ranks, and also told apart by line style and marker, so that r = 8 and r = 16 (Okabe-Ito's blue, Tol's
# indigo) differ at a glance and in grey.  Every method solid with a round marker but LoRA's ranks.
PALETTE = {
    "full": Look("#D55E00"),
    "frozenemb": Look("#E69F00"),
    "adapter": Look("#000000"),
    "adaptersgd": Look("#666666"),
    "flora": Look("#882255"),
    "lorafa": Look("#009E73"),
    "lorafixed": Look("#999999"),
    "dpsgd": Look("#CC79A7"),
    "rowscale": Look("#56B4E9"),
    "lora": Look("#2171B5"),  # a LoRA variant without a rank, or of a rank not listed
    "lora-r1": Look("#9ECAE1", ":", "v"),
    "lora-r2": Look("#6BAED6", ":", "^"),
    "lora-r4": Look("#4292C6", "-.", "D"),
    "lora-r8": Look("#0072B2", "-", "o"),
    "lora-r16": Look("#332288", "--", "s"),
    "lora-r32": Look("#08306B", "-.", "P"),
    "lora-r64": Look("#041A3C", ":", "X"),
}


def method_look(variant: str) -> Look:
    """The :data:`PALETTE` row of a method's variant name (``full``, ``lora-r8``, ``dpsgd-r8-z1``...)."""
    method, *rest = variant.split("-")
    if method == "lora":
        return PALETTE.get(f"lora-{rest[0]}", PALETTE["lora"]) if rest else PALETTE["lora"]
    if method not in PALETTE:
        raise KeyError(f"no colour for method {method!r}; add it to plots.PALETTE")
    return PALETTE[method]


def method_style(variant: str) -> dict[str, str]:
    """The book's colour, line style and marker of a method's variant, as keyword arguments of ``plot``."""
    look = method_look(variant)
    return {"color": look.colour, "ls": look.ls, "marker": look.marker}


def method_colour(variant: str) -> str:
    """The book's colour of a method's variant name (``full``, ``lora-r8``, ``dpsgd-r8-z1``...)."""
    return method_look(variant).colour


def _log_ticks(axis, low: float, high: float) -> None:
    """Readable ticks on a log axis: a few plain numbers within a narrow range (less than a factor of 10, where
    matplotlib's labels of the minor ticks overlap), powers of ten written out otherwise."""
    from matplotlib.ticker import FuncFormatter, LogLocator, MaxNLocator, NullFormatter

    plain = FuncFormatter(lambda value, _: f"{value:g}")
    axis.set_major_locator(MaxNLocator(4) if high / low < 10 else LogLocator(base=10))
    axis.set_major_formatter(plain)
    axis.set_minor_formatter(NullFormatter())


# The house rule for figure text (issue 60): no text renders below MIN_TEXT_PX CSS pixels where the book shows the
# figure, on a phone's column as on a desktop's (wider).  PHONE_COLUMN_PX is a little under the narrowest column a
# figure gets on a 390 px screen (336 px: a notebook's figure output in a toggle, measured by tools/check_html.py).
# A figure shown in a column narrower than its own width is scaled down with its text, so text of s pt on a figure
# W in wide renders at s / 72 * min(96, column / W) px (96 CSS px to the inch: an SVG; a PNG at DPI scales alike).
# WIDTH and the style's sizes (11 pt and more) keep every figure inside the rule; save_figure and the inline PNGs
# record the smallest text size so that the browser check can measure the rendered size on the built pages.
WIDTH = 5.4
PHONE_COLUMN_PX = 330
MIN_TEXT_PX = 9.0
CSS_PX_PER_IN = 96
PAD_IN = 0.1  # savefig's pad around a tight bounding box, each side
TEXT_RECORD = "lorapriv figure: smallest text {pt:g} pt"  # the record's form in the SVG's and the PNG's metadata
_RECORD = re.compile(r"lorapriv figure: smallest text ([0-9.]+) pt")


def smallest_text(fig) -> tuple[float, float]:
    """``fig``'s smallest drawn text size (pt, of every visible non-empty text: mathtext scripts are drawn at 70%
    of it) and its width as saved with a tight bounding box (in)."""
    from matplotlib.text import Text

    fig.draw_without_rendering()  # lays out the texts, also once a notebook has shown and closed the figure
    sizes = [t.get_fontsize() for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()]
    width = fig.get_tightbbox().width + 2 * PAD_IN
    return (min(sizes) if sizes else math.inf), width


def rendered_text_px(text_pt: float, figure_in: float, column_px: float = PHONE_COLUMN_PX) -> float:
    """CSS pixels of ``text_pt`` text on a figure ``figure_in`` wide, shown in a column ``column_px`` wide."""
    return text_pt / 72 * min(CSS_PX_PER_IN, column_px / figure_in)


def text_record(svg_or_png: bytes) -> float | None:
    """The smallest text size (pt) a figure's file records (:data:`TEXT_RECORD`), or None where it records none."""
    match = _RECORD.search(svg_or_png.decode("latin-1"))
    return float(match.group(1)) if match else None


def _checked(fig):
    """``fig``, once its text is shown to render at MIN_TEXT_PX or more on a phone; inline PNGs record the size."""
    pt, width = smallest_text(fig)
    px = rendered_text_px(pt, width)
    if px < MIN_TEXT_PX:
        raise ValueError(
            f"figure text of {pt:g} pt on a figure {width:.2f} in wide renders at {px:.1f} px on a phone "
            f"({PHONE_COLUMN_PX} px column), below {MIN_TEXT_PX:g} px: draw it narrower or its text larger"
        )
    _record_inline_pngs()
    return fig


def png_bytes(fig) -> bytes:
    """``fig`` as the PNG a notebook shows (tight bounding box, DPI), with its smallest text size recorded."""
    buffer = io.BytesIO()
    pt, _ = smallest_text(fig)
    fig.savefig(buffer, format="png", bbox_inches="tight", metadata={"Description": TEXT_RECORD.format(pt=pt)})
    return buffer.getvalue()


def _record_inline_pngs() -> None:
    """Show figures in a notebook through :func:`png_bytes`.  matplotlib's inline backend registers its own PNG
    formatter when it loads, at a notebook's first figure, so this runs after each figure is made."""
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython ships with the notebooks' kernel
        return
    shell = get_ipython()
    if shell is not None:
        shell.display_formatter.formatters["image/png"].for_type(plt.Figure, png_bytes)


def _figure(height: float, width: float = WIDTH):
    """A figure ``width`` (the book's) by ``height`` inches, laid out by constrained layout."""
    return plt.figure(figsize=(width, height), layout="constrained")


def _legend_below(fig, ax=None, ncol: int = 2, handles=None, labels=None, side: str = "lower") -> None:
    """A legend below ``fig`` (a figure or a subfigure; above it where ``side`` is "upper"), at most ``ncol``
    entries a row, fewer where its rows would make the figure wider than WIDTH, of ``ax``'s lines or the given
    handles; an axes' own legend (seaborn draws one) goes."""
    if handles is None:
        handles, labels = ax.get_legend_handles_labels()
    if ax is not None and ax.get_legend() is not None:
        ax.get_legend().remove()
    top = fig.figure  # the root figure, of a subfigure or of itself
    for columns in range(min(ncol, len(labels)), 0, -1):
        legend = fig.legend(handles, labels, loc=f"outside {side} center", ncol=columns, frameon=False)
        top.draw_without_rendering()
        if columns == 1 or top.get_tightbbox().width <= WIDTH + 0.05:
            return
        legend.remove()


def save_figure(fig, name: str, root: Path | None = None) -> Path:
    """Write ``fig`` to ``<book root>/book/figures/<name>.svg``, byte for byte the same on every run, with its
    smallest text size recorded in its metadata for the browser check."""
    from .ledger import ledger_dir

    if not name.replace("_", "").replace("-", "").isalnum():
        raise ValueError(f"figure name must be letters, digits, '_' or '-', got {name!r}")
    folder = (Path(root) if root else ledger_dir().parent) / FIGURES_DIR
    pt, _ = smallest_text(fig)
    buffer = io.StringIO()
    with mpl.rc_context({"svg.hashsalt": "lorapriv", "svg.fonttype": "path"}):
        metadata = {"Date": None, "Description": TEXT_RECORD.format(pt=pt)}
        fig.savefig(buffer, format="svg", metadata=metadata, bbox_inches="tight")
    path = folder / f"{name}.svg"
    atomic_write_text(path, stable_ids(buffer.getvalue()))
    return path


_HASHED_ID = re.compile(r"\b([pmh])[0-9a-f]{10}\b")  # matplotlib's clip-path, marker and hatch ids


def stable_ids(svg: str) -> str:
    """``svg`` with matplotlib's hashed element ids numbered in order of first use.  matplotlib hashes a clip box's
    coordinates into its id, and a tight bounding box moves them by round-off that the data carry (a last-bit
    difference in a computed value), so the same figure could get other ids on another run."""
    names: dict[str, str] = {}

    def number(match: re.Match) -> str:
        return names.setdefault(match.group(0), f"{match.group(1)}{len(names)}")

    return _HASHED_ID.sub(number, svg)


def zscore_plot(tables: dict[str, pd.DataFrame], z_max: float = 4.0):
    """Monte Carlo z-scores against closed forms, one strip per table; the band is the pass region."""
    style()
    frame = pd.concat([t.assign(table=name)[["table", "z"]] for name, t in tables.items()], ignore_index=True)
    frame = frame[np.isfinite(frame["z"])]
    fig = _figure(0.5 * len(tables) + 1.6)
    ax = fig.subplots()
    ax.axvspan(-z_max, z_max, color="0.92", zorder=0)
    sns.stripplot(data=frame, x="z", y="table", ax=ax, jitter=False, size=5, alpha=0.6)
    ax.axvline(0, color="0.4", lw=1)
    ax.set_xlabel("$z$ = (Monte Carlo $-$ exact) / s.e.")
    ax.set_ylabel("")
    ax.set_xlim(-1.25 * z_max, 1.25 * z_max)
    return _checked(fig)


def ratio_plot(frame: pd.DataFrame, x: str, y: str, xlabel: str, ylabel: str, reference: float = 1.0):
    """A ratio against a parameter on log-log axes, with the reference ratio drawn."""
    style()
    fig = _figure(3.6)
    ax = fig.subplots()
    ax.loglog(frame[x], frame[y], "o-", label="measured")
    ax.axhline(reference, color="0.3", ls="--", lw=1.2, label="paper's value")
    values = np.append(frame[y].to_numpy(dtype=float), reference)
    ax.set_ylim(values.min() / 1.25, values.max() * 1.25)  # the reference line clear of the frame
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    _legend_below(fig, ax)
    return _checked(fig)


def drift_plot(drift: pd.DataFrame):
    """Section 2: LoRA's distance from the frozen-A dynamics against eta L, with the (eta L)^2 reference."""
    style()
    fig = _figure(4.8)
    ax = fig.subplots()
    sns.scatterplot(data=drift, x="eta_L", y="drift", hue="problem", style="steps", ax=ax)
    x = np.logspace(np.log10(drift["eta_L"].min()), np.log10(drift["eta_L"].max()), 50)
    ax.plot(x, x**2, color="0.3", ls="--", lw=1.2, label=r"$(\eta L)^2$")
    ax.set(
        xscale="log",
        yscale="log",
        xlabel=r"$\eta L$",
        ylabel=r"$\|W_{\mathrm{LoRA}} - W_{\mathrm{fr}}\| \,/\, \|W_{\mathrm{fr}} - W_0\|$",
    )
    # seaborn's legend holds its headings ("problem", "steps") as entries: drop them, name the steps instead
    steps = {str(v) for v in drift["steps"].unique()}
    handles, labels = [], []
    for handle, text in zip(*ax.get_legend_handles_labels(), strict=True):
        if text not in ("problem", "steps"):
            handles.append(handle)
            labels.append(f"{text} steps" if text in steps else text)
    _legend_below(fig, ax, ncol=3, handles=handles, labels=labels)
    return _checked(fig)


def adversarial_plot(adv: pd.DataFrame):
    """Section 2: ||f_A(T)|| for rotating gradient sequences against Theorem 2.1's bound."""
    style()
    fig = _figure(4.6)
    ax = fig.subplots()
    for (angle, lr), part in adv.groupby(["angle", "lr"]):
        line = ax.plot(part["steps"], part["f_a_norm"], "o-", label=f"angle {angle}, $\\eta$ = {lr}")[0]
        ax.plot(part["steps"], part["f_a_bound"], ls=":", lw=1.5, color=line.get_color())
    ax.plot([], [], ls=":", lw=1.5, color="0.3", label="Theorem 2.1's bound")
    ax.set(xscale="log", yscale="log", xlabel="steps $T$", ylabel=r"$\|f_A(T)\|_2$")
    _ticks_at(ax.xaxis, adv["steps"])
    ax.margins(y=0.08)
    _legend_below(fig, ax, ncol=3)
    return _checked(fig)


def noise_histograms(samples: dict[str, np.ndarray], limit_pdf=None):
    """Section 3: standardised histograms and normal QQ plots of noise samples, one row per sample."""
    from scipy import stats

    style()
    fig = _figure(2.5 * len(samples) + 0.5)
    axes = fig.subplots(len(samples), 2, squeeze=False)
    grid = np.linspace(-5, 5, 400)
    for k, (label, u) in enumerate(samples.items()):
        z = (u - u.mean()) / u.std()
        ax = axes[k, 0]
        ax.hist(z, bins=200, range=(-5, 5), density=True, histtype="stepfilled", color="0.75", label="samples")
        ax.plot(grid, stats.norm.pdf(grid), label=r"$\mathcal{N}(0, 1)$")
        if limit_pdf is not None and label in limit_pdf:
            ax.plot(grid, limit_pdf[label](grid), ls="--", label="exact law")
        ax.set(title=label, yscale="log", ylim=(1e-5, 1))
        probs = (np.arange(1, 200) - 0.5) / 199
        axes[k, 1].plot(stats.norm.ppf(probs), np.quantile(z, probs), ".")
        axes[k, 1].plot([-3, 3], [-3, 3], color="0.4", lw=1)
        axes[k, 1].set(title=f"{label}: QQ", ylabel="sample quantile")
    axes[-1, 0].set_xlabel("standardised value")
    axes[-1, 1].set_xlabel("normal quantile")
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside upper center", ncol=3, frameon=False)
    return _checked(fig)


def kurtosis_plot(kurt: pd.DataFrame):
    """Section 3: exact excess kurtosis of one noise element against m, per rank, with the 6/r limits."""
    style()
    fig = _figure(4.2)
    ax = fig.subplots()
    for r, part in kurt.groupby("r"):
        line = ax.plot(part["m"], part["excess_kurtosis"], "o-", label=f"$r$ = {r}")[0]
        ax.axhline(6 / r, color=line.get_color(), ls=":", lw=1.5)
    ax.plot([], [], ls=":", lw=1.5, color="0.3", label="limit $6/r$")
    ax.set(xscale="log", yscale="log", xlabel="input dimension $m$", ylabel="excess kurtosis of $u_i$")
    _legend_below(fig, ax, ncol=3)
    return _checked(fig)


def distance_plot(table: pd.DataFrame, limits: pd.DataFrame):
    """Section 4: exact TV distance against m per rank, with eq. 46's bound (top); the limit against r (bottom)."""
    style()
    fig = _figure(7.8)
    top, bottom = fig.subfigures(2, 1, height_ratios=(1.15, 1))
    ax = top.subplots()
    for r, part in table.groupby("r"):
        line = ax.plot(part["m"], part["tv"], "o-", label=f"$r$ = {r}")[0]
        ax.plot(part["m"], part["bound_eq46"], ls=":", lw=1.5, color=line.get_color())
    ax.plot([], [], ls=":", lw=1.5, color="0.3", label="eq. 46 bound")
    ax.set(xscale="log", yscale="log", xlabel="input dimension $m$", ylabel=r"TV to $\mathcal{N}(0, \|q\|^2/r)$")
    _legend_below(top, ax, ncol=3)
    ax2 = bottom.subplots()
    ax2.loglog(limits["r"], limits["tv_limit"], "o-", label=r"limit $m \to \infty$")
    ax2.loglog(
        limits["r"], limits["tv_limit"].iloc[0] / np.sqrt(limits["r"]), ls="--", lw=1.2, label="claimed $r^{-1/2}$"
    )
    ax2.set(xlabel="rank $r$", ylabel="TV")
    _legend_below(bottom, ax2)
    return _checked(fig)


RULE_LABELS = {**RULES, "lora_frozen_a": "frozen $A$ (eq. 9)"}  # labels.RULES, the matrix in mathtext


def rules_plot(rules: pd.DataFrame):
    """Section 2: final training loss of the four update rules, one row of dots per problem and rank."""
    style()
    long = rules.melt(
        id_vars=["problem", "r"], value_vars=list(RULE_LABELS), var_name="rule", value_name="loss"
    ).assign(rule=lambda f: f["rule"].map(RULE_LABELS), case=lambda f: f["problem"] + ", $r$ = " + f["r"].astype(str))
    fig = _figure(0.45 * long["case"].nunique() + 2.2)
    ax = fig.subplots()
    sns.stripplot(data=long, x="loss", y="case", hue="rule", ax=ax, jitter=False, size=7, marker="D", alpha=0.85)
    ax.set(xscale="log", xlabel="training loss after the longest run", ylabel="")
    _legend_below(fig, ax)
    return _checked(fig)


def privacy_profile_plot(profile: pd.DataFrame):
    """Paper B, vector queries: delta(eps) of the noise-free Wishart mechanism (solid, Monte Carlo points)
    against the Gaussian mechanism with the same mean squared error (dashed), one colour per (d, r, rho)."""
    style()
    fig = _figure(4.8)
    ax = fig.subplots()
    for (d, r, rho), part in profile.groupby(["d", "r", "rho"]):
        line = ax.plot(part["eps"], part["delta"], "-", lw=1.8, label=f"$d$ = {d}, $r$ = {r}, $\\rho$ = {rho}")[0]
        ax.plot(part["eps"], part["gaussian_equal_mse"], "--", lw=1.2, color=line.get_color())
        shown = part[part["delta_mc"] > 0]
        ax.errorbar(shown["eps"], shown["delta_mc"], yerr=2 * shown["mc_se"], fmt="o", ms=3, color=line.get_color())
    ax.plot([], [], "--", color="0.3", label="Gaussian, same error")
    ax.plot([], [], "o", ms=3, color="0.3", label="Monte Carlo ($\\pm 2$ s.e.)")
    ax.set(yscale="log", xlabel=r"$\varepsilon$", ylabel=r"$\delta(\varepsilon)$")
    # the Wishart curves and their Monte Carlo points set the range; a Gaussian curve falling far below is cut
    shown = pd.concat([profile["delta"], profile["delta_mc"]])
    ax.set_ylim(max(shown[shown > 0].min() / 10, 1e-12), 1.5)
    _legend_below(fig, ax)
    return _checked(fig)


def dp_map_plot(dpmap: pd.DataFrame, delta: float):
    """Paper B, vector queries: eps at a fixed delta against 1 - rho, one line per rank (solid: Wishart,
    dashed: Gaussian with the same error); ranks with no finite eps are marked at the top."""
    style()
    fig = _figure(4.6)
    ax = fig.subplots()
    finite_max = dpmap.loc[np.isfinite(dpmap["eps_wishart"]), "eps_wishart"].max()
    top = 2 * max(finite_max, dpmap["eps_gaussian_equal_mse"].max())
    for r, part in dpmap.groupby("r"):
        gap = 1 - part["rho"]
        ok = np.isfinite(part["eps_wishart"])
        line = ax.plot(gap[ok], part["eps_wishart"][ok], "o-", label=f"$r$ = {r}")[0]
        ax.plot(gap[~ok], np.full((~ok).sum(), top), "x", color=line.get_color(), ms=7)
        ax.plot(gap, part["eps_gaussian_equal_mse"], "--", lw=1, color=line.get_color())
    ax.plot([], [], "x", color="0.3", label="no finite $\\varepsilon$")
    ax.plot([], [], "--", color="0.3", label="Gaussian, same error")
    ax.set(
        xscale="log",
        yscale="log",
        xlabel=r"$1 - \rho$ (neighbours less aligned $\rightarrow$)",
        ylabel=rf"$\varepsilon$ at $\delta = {_tex_number(delta)}$",
    )
    ax.set_ylim(top=1.6 * top)  # the crosses of ranks with no finite epsilon inside the frame
    _legend_below(fig, ax, ncol=3)
    return _checked(fig)


def figure2_plot(table: pd.DataFrame, read: pd.DataFrame, delta: float):
    """Paper B's Fig. 2 recomputed: eps at ``delta`` against the rank, one panel per alignment (stacked): the
    exact curve, Theorem 1 as printed and with its first term clipped at 0 (lines), and the points read off the
    paper's figure."""
    style()
    rhos = sorted(table["rho"].unique())
    fig = _figure(2.7 * len(rhos) + 1.2)
    axes = fig.subplots(len(rhos), 1, squeeze=False, sharex=True)
    for ax, rho in zip(axes[:, 0], rhos, strict=True):
        part = table[table["rho"] == rho]
        ax.plot(part["r"], part["eps_exact"], "o-", color="C0", label="exact (ours)")
        ax.plot(part["r"], part["eps_theorem"], "s--", color="C1", label="Theorem 1 as printed")
        ax.plot(part["r"], part["eps_clipped"], ":", color="C1", label="its first term clipped at 0")
        for curve, marker, color in (("exact", "x", "C0"), ("Theorem 1", "+", "C1")):
            points = read[(read["curve"] == curve) & (read["rho"] == rho)]
            ax.plot(points["r"], points["eps_read"], marker, color=color, ms=9, mew=2, label=f"paper: {curve}")
        ax.set(
            yscale="log",
            ylabel=rf"$\varepsilon$ at $\delta = {_tex_number(delta)}$",
            title=rf"$\rho$ = {rho:g}, $d$ = {int(part['d'].iloc[0])}",
        )
    axes[-1, 0].set_xlabel("rank $r$")
    _legend_below(fig, axes[0, 0])
    return _checked(fig)


def attack_scores_plot(scores: dict[str, np.ndarray], member: np.ndarray):
    """Paper B, matrix queries: distribution of an attack's scores with the target in and out, one panel per
    attack (stacked)."""
    style()
    fig = _figure(2.4 * len(scores) + 0.8)
    axes = fig.subplots(len(scores), 1, squeeze=False)
    for ax, (name, s) in zip(axes[:, 0], scores.items(), strict=True):
        bins = np.linspace(s.min(), s.max(), 40)
        ax.hist(s[~member], bins=bins, alpha=0.7, label="target out")
        ax.hist(s[member], bins=bins, alpha=0.7, label="target in")
        ax.set(title=name, ylabel="trials")
    axes[-1, 0].set_xlabel("attack score")
    _legend_below(fig, axes[0, 0])
    return _checked(fig)


def multiplier_plot(mult: pd.DataFrame, floor: float = 1e-3):
    """Paper A §5.1: LoRA's noise on a row-scaled batch as a DP-SGD multiplier, over the formula's, per batch
    geometry and rank; ratios below ``floor`` (noise that vanishes) are drawn at the floor and marked."""
    style()
    fig = _figure(0.5 * mult["geometry"].nunique() + 2.6)
    ax = fig.subplots()
    rows = {g: k for k, g in enumerate(dict.fromkeys(mult["geometry"]))}
    ranks = sorted(mult["r"].unique())
    dodge = {r: 0.3 * (k - (len(ranks) - 1) / 2) for k, r in enumerate(ranks)}  # each rank on its own line
    for (r, part), marker in zip(mult.groupby("r"), "Dos^v", strict=False):
        y = part["geometry"].map(rows) + dodge[r]
        ax.scatter(np.maximum(part["ratio"], floor), y, s=45, marker=marker, label=f"$r$ = {r}")
    vanished = mult[mult["ratio"] < floor]
    if len(vanished):
        y = vanished["geometry"].map(rows) + vanished["r"].map(dodge)
        ax.scatter(np.full(len(vanished), floor), y, s=160, facecolors="none", edgecolors="0.2")
        ax.plot([], [], "o", mfc="none", mec="0.2", label=f"below {floor:g} (noise vanishes)")
    ax.axvline(1.0, color="0.3", ls="--", lw=1.2, label="the formula's multiplier")
    ax.set(xscale="log", xlabel="measured multiplier / formula's", ylabel="per-sample gradients")
    ax.set_yticks(list(rows.values()), list(rows))
    ax.set_ylim(len(rows) - 0.5, -0.5)  # the first geometry on top, as a table reads
    ax.set_xlim(left=floor / 2)  # the circled points clear of the axis
    _legend_below(fig, ax)
    return _checked(fig)


def frontier_plot(
    points: pd.DataFrame,
    fronts: pd.DataFrame,
    variants: list[str],
    labels: dict[str, str],
    column: str = "auc",
    titles: dict[str, str] | None = None,
):
    """Paper A §6: attack AUC (``column="auc"``) or TPR at 1% FPR (``"tpr1"``) against validation perplexity, one
    panel per dataset (stacked, titled by ``titles``); every checkpoint faint, each variant's front (its most
    private checkpoint at least as useful as each perplexity) as a step, in the method's look (:data:`PALETTE`)."""
    ylabels = {"auc": "AUC, eq. 24's attack", "tpr1": "TPR at 1% nominal FPR"}
    chance = {"auc": 0.5, "tpr1": 0.01}
    style()
    datasets = list(dict.fromkeys(points["dataset"]))
    fig = _figure(3.0 * len(datasets) + 0.3 * math.ceil((len(variants) + 1) / 2) + 0.4)
    axes = fig.subplots(len(datasets), 1, squeeze=False)
    styles = {name: method_style(name) for name in variants}
    for ax, dataset in zip(axes[:, 0], datasets, strict=True):
        for name in variants:
            mine = points[(points["dataset"] == dataset) & (points["variant"] == name) & (points["epoch"] > 0)]
            line = fronts[(fronts["dataset"] == dataset) & (fronts["variant"] == name)]
            colour, ls, marker = styles[name]["color"], styles[name]["ls"], styles[name]["marker"]
            ax.scatter(mine["ppl"], mine[column], s=12, alpha=0.35, color=colour, marker=marker)
            ax.step(line["ppl"], line[column], where="post", lw=1.6, color=colour, ls=ls, label=labels[name])
            ax.plot(line["ppl"], line[column], marker, ms=3.5, color=colour, ls="none")
        base = points[(points["dataset"] == dataset) & (points["epoch"] == 0)].iloc[0]
        ax.scatter([base["ppl"]], [base[column]], marker="*", s=140, color="0.2", zorder=5, label="base model")
        shown_min = points[(points["dataset"] == dataset) & points["variant"].isin(variants)]["ppl"].min()
        low, high = shown_min / 1.02, base["ppl"] * 1.05  # the base model's star inside the frame
        ax.set_xlim(low, high)  # checkpoints worse than the base lie off the right edge
        ax.axhline(chance[column], color="0.5", lw=0.8, ls=":")
        title = (titles or {}).get(dataset, dataset)
        ax.set(xscale="log", xlabel="validation perplexity (log scale)", ylabel=ylabels[column], title=title)
        _log_ticks(ax.xaxis, low, high)
    _legend_below(fig, axes[-1, 0])
    return _checked(fig)


def roc_plot(curves: dict[str, dict[str, tuple[np.ndarray, np.ndarray]]], labels: dict[str, str]):
    """ROC curves on log-log axes, one panel per attack (two a row), one line per method (with the chance
    diagonal)."""
    style()
    cols = min(2, len(curves))
    rows = math.ceil(len(curves) / cols)
    fig = _figure(2.7 * rows + 0.3 * math.ceil(len(labels) / 2) + 0.4)
    axes = fig.subplots(rows, cols, squeeze=False, sharey=True)
    for ax, (attack, by_variant) in zip(axes.flat, curves.items(), strict=False):
        floor = 1.0
        for name, (fpr, tpr) in by_variant.items():
            shown = {k: v for k, v in method_style(name).items() if k != "marker"}
            ax.plot(np.maximum(fpr, 1e-4), np.maximum(tpr, 1e-4), lw=1.3, label=labels[name], **shown)
            floor = min(floor, fpr[fpr > 0].min() if (fpr > 0).any() else 1.0)
        grid = np.logspace(-4, 0, 50)
        ax.plot(grid, grid, color="0.5", ls=":", lw=1)
        ax.axvline(floor, color="0.7", lw=0.8, ls="--")
        ax.set(xscale="log", yscale="log", xlim=(1e-3, 1), ylim=(1e-3, 1.05), xlabel="FPR", title=attack)
    for ax in axes.flat[len(curves) :]:
        ax.axis("off")
    for row in axes:
        row[0].set_ylabel("TPR")
    _legend_below(fig, axes.flat[0])
    return _checked(fig)


def score_distributions_plot(signals: dict[str, tuple[np.ndarray, np.ndarray]], labels: dict[str, str]):
    """Members' and non-members' eq. 24 signals, one small panel per method, two a row."""
    style()
    count = len(signals)
    cols = min(2, count)
    rows = math.ceil(count / cols)
    fig = _figure(1.9 * rows + 0.9)
    axes = fig.subplots(rows, cols, squeeze=False)
    for ax, (name, (members, nonmembers)) in zip(axes.flat, signals.items(), strict=False):
        bins = np.linspace(min(members.min(), nonmembers.min()), max(members.max(), nonmembers.max()), 35)
        ax.hist(nonmembers, bins=bins, alpha=0.6, label="non-members")
        ax.hist(members, bins=bins, alpha=0.6, label="members")
        ax.set_title(labels[name], fontsize=11)
        ax.set_yticks([])
    for ax in axes.flat[count:]:
        ax.axis("off")
    for ax in axes[-1]:
        ax.set_xlabel("L(target) $-$ L(reference)", fontsize=11)
    _legend_below(fig, axes.flat[0])
    return _checked(fig)


def rank_plot(ranks: pd.DataFrame):
    """LoRA's rank at a fixed budget: AUC (top) and validation perplexity (bottom) against r, per dataset."""
    style()
    fig = _figure(5.6)
    axes = fig.subplots(2, 1, sharex=True)
    for dataset, part in ranks.groupby("dataset", sort=False):
        axes[0].plot(part["r"], part["auc"], "-o", ms=4, label=dataset)
        axes[1].plot(part["r"], part["ppl"], "-o", ms=4, label=dataset)
    for ax, ylabel in zip(axes, ("AUC, eq. 24's attack", "validation perplexity"), strict=True):
        ax.set(xscale="log", ylabel=ylabel)
        _ticks_at(ax.xaxis, ranks["r"])
    axes[1].set_xlabel("LoRA rank $r$")
    _legend_below(fig, axes[1])
    return _checked(fig)


def composition_plot(m2: pd.DataFrame, delta: float):
    """Paper B, M2: eps at ``delta`` against the number of steps, the noise alone (black), M2 with a fresh A each
    step (solid, a certificate) and with one frozen A and a fixed difference (dashed, a scenario), one colour per
    rank below d."""
    style()
    fig = _figure(5.0)
    ax = fig.subplots()
    alone = m2.drop_duplicates("steps")
    ax.plot(alone["steps"], alone["eps_noise_alone"], "k-", lw=2, label="noise alone")
    for r, part in m2[m2["r"] < m2["d"]].groupby("r"):
        line = ax.plot(part["steps"], part["eps_m2_fresh_A"], "o-", label=f"$r$ = {r}, fresh $A$")[0]
        ax.plot(
            part["steps"],
            part["eps_m2_frozen_A_fixed_difference"],
            "s--",
            color=line.get_color(),
            label=f"$r$ = {r}, frozen $A$, fixed diff.",
        )
    ax.set(xscale="log", yscale="log", xlabel="steps $T$", ylabel=rf"$\varepsilon$ at $\delta = {_tex_number(delta)}$")
    _ticks_at(ax.xaxis, m2["steps"])
    _legend_below(fig, ax)
    return _checked(fig)


def m1_profile_plot(m1: pd.DataFrame):
    """Paper B, M1: delta(eps) of the noise alone (black), M1 with A secret (solid, +-2 s.e.) and with A
    published (dashed), one colour per rank."""
    style()
    fig = _figure(4.8)
    ax = fig.subplots()
    alone = m1.drop_duplicates("eps")
    ax.plot(alone["eps"], alone["delta_noise_alone"], "k-", lw=2, label="noise alone")
    for r, part in m1.groupby("r"):
        line = ax.errorbar(
            part["eps"],
            part["delta_m1_secret_A"],
            yerr=2 * part["secret_se"],
            fmt="o-",
            ms=3,
            label=f"$r$ = {r}, $A$ secret",
        )
        color = line[0].get_color()
        ax.plot(part["eps"], part["delta_m1_published_A"], "--", color=color, label=f"$r$ = {r}, $A$ published")
    ax.set(yscale="log", xlabel=r"$\varepsilon$", ylabel=r"$\delta(\varepsilon)$")
    _legend_below(fig, ax)
    return _checked(fig)


def dp_weights_plot(frame: pd.DataFrame, labels: dict[str, str], base_ppl: float | None = None):
    """Paper B, DP training of several weight sets: reference-attack AUC (95% interval) against validation
    perplexity, one marker per weight set, one colour per noise multiplier (the chapter's ``dp_means``: means over
    seeds, bars from ``reference_low`` to ``reference_high``); the base model's perplexity as a dashed line."""
    style()
    fig = _figure(6.0)
    ax = fig.subplots()
    if base_ppl is not None:
        ax.axvline(base_ppl, color="0.3", ls="--", lw=1)
    markers = dict(zip(labels, "osD^v", strict=False))
    colors = {z: f"C{i}" for i, z in enumerate(sorted(frame["noise"].unique()))}
    for row in frame.itertuples():
        ax.errorbar(
            row.perplexity,
            row.reference_auc,
            yerr=[[row.reference_auc - row.reference_low], [row.reference_high - row.reference_auc]],
            fmt=markers[row.weights],
            color=colors[row.noise],
            ms=6,
            capsize=2,
        )
    ax.axhline(0.5, color="0.5", ls=":", lw=1)
    handles = [plt.Line2D([], [], color="0.3", marker=m, ls="", label=labels[w]) for w, m in markers.items()]
    handles += [
        plt.Line2D([], [], color=c, marker="o", ls="", label=rf"$\sigma$ = {z:g}" + (" (no noise)" if z == 0 else ""))
        for z, c in colors.items()
    ]
    if base_ppl is not None:
        handles.append(plt.Line2D([], [], color="0.3", ls="--", label="base model"))
    ax.set(xlabel="validation perplexity", ylabel="reference-attack AUC")
    sets, rest = handles[: len(markers)], handles[len(markers) :]  # the weight sets' markers, the noise's colours
    _legend_below(fig, ncol=3, handles=rest, labels=[h.get_label() for h in rest], side="upper")
    _legend_below(fig, ncol=1, handles=sets, labels=[h.get_label() for h in sets])
    return _checked(fig)


def audit_plot(table: pd.DataFrame):
    """Paper A §5.1's audit: each method's canary AUC with its bootstrap interval (top) and the one-run audit's
    epsilon lower bound (bottom), one row per audited method, top to bottom as in the table."""
    style()
    labels = list(table["method"])[::-1]
    fig = _figure(2 * (0.36 * len(labels) + 1.1), width=WIDTH - 0.3)  # room for long method names
    top, bottom = fig.subplots(2, 1, sharey=True)
    y = np.arange(len(labels))
    rows = table.iloc[::-1]
    top.errorbar(
        rows["canary_auc"],
        y,
        xerr=[rows["canary_auc"] - rows["auc_low"], rows["auc_high"] - rows["canary_auc"]],
        fmt="D",
        ms=6,
        capsize=3,
    )
    top.axvline(0.5, color="0.3", ls="--", lw=1.2)
    top.set(yticks=y, yticklabels=labels, xlabel="canary AUC (in vs out), 95% interval")
    bottom.barh(y, rows["eps_lower_bound"], color=sns.color_palette()[1], height=0.5)
    bottom.set(xlabel=r"audited $\varepsilon$ lower bound (95%)")
    return _checked(fig)
