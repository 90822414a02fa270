"""The run scales: one record per scale says how big every computation is.

Every notebook's first code cell calls :func:`current_scale`, which reads the
environment variable ``LORAPRIV_SCALE`` (default ``cpu-small``); the command line
takes ``--scale``.  The three scales share one code path; only the sizes below
change.  A :class:`Scale` holds the Monte Carlo sizes and grids of the theory
chapters and, in :class:`EngineScale`, everything the membership-inference engine
needs: the base model, the per-method training defaults, the datasets, the data caps
and the DP-SGD settings.  No setting is keyed by a scale's name elsewhere; what is named by scale is
which committed records a chapter reads (``lorapriv_utils.catalogue``, the a6 chapter's larger scale).

This module imports no torch: the theory chapters read it too.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field
from pathlib import Path

ENV_VAR = "LORAPRIV_SCALE"
DEFAULT_SCALE = "cpu-small"


# GPT-2 117M's weights on the Hugging Face hub, pinned to the commit its model card has served since 2024 (the
# snapshot folder of openai-community/gpt2 and of its alias gpt2): the paper scale loads exactly these weights.
GPT2_REVISION = "607a30d783dfa663caf39e06633721c8d4cfcd7e"


@dataclass(frozen=True)
class ModelSpec:
    """Architecture and pre-training budget of a small base model (``hub_id`` set: load it instead, at
    ``hub_revision`` when given, the commit loaded recorded either way; ``gguf`` set: load that pretrained
    file, whose architecture the other fields must describe)."""

    n_layer: int = 2
    n_embd: int = 64
    n_head: int = 2
    block_size: int = 64
    vocab_size: int = 2048
    pretrain_epochs: int = 4
    pretrain_lr: float = 3e-3
    batch_size: int = 16
    hub_id: str | None = None
    hub_revision: str | None = None  # a commit or tag of ``hub_id`` (None: the hub's current main, recorded as loaded)
    family: str = "gpt2"  # the architecture (``lorapriv_utils.mia.engine.families``): "gpt2" or "llama"
    n_kv_head: int | None = None  # key and value heads (Llama's grouped-query attention; None: n_head)
    n_inner: int | None = None  # the MLP's width (None: 4 n_embd)
    gguf: str | None = None  # a pretrained GGUF source (``mia.engine.pretrained.SOURCES``): load it instead
    folder: str | None = None  # a local folder of safetensors weights, config and tokenizer (a user's own model)
    folder_sha256: str | None = None  # the digest of that folder's files (``mia.engine.recipe.folder_digest``)

    def identity(self) -> dict:
        """The fields as keys and manifests record them.  Fields added after records were made are left out
        at the default that reproduces those records, so that adding them re-keyed nothing."""
        return {k: v for k, v in asdict(self).items() if not (k in _ADDED_FIELDS and v == _ADDED_FIELDS[k])}

    def parameters(self) -> int:
        """The base model's weights, counted from the architecture (input and output embeddings tied, as both
        families' models here have them): GPT-2 with its learned positions and biases, Llama without either."""
        d, inner, layers = self.n_embd, self.n_inner or 4 * self.n_embd, self.n_layer
        if self.family == "llama":
            kv = (self.n_kv_head or self.n_head) * (d // self.n_head)
            return self.vocab_size * d + layers * (2 * d * d + 2 * d * kv + 3 * d * inner + 2 * d) + d
        block = (d * 3 * d + 3 * d) + (d * d + d) + (d * inner + inner) + (inner * d + d) + 4 * d
        return (self.vocab_size + self.block_size) * d + layers * block + 2 * d

    def describe(self) -> str:
        """The base model in words, for pages that state what a number was measured on."""
        if self.gguf is not None:
            return f"SmolLM2-135M-Instruct, pretrained ({self.parameters():,} parameters; not GPT-2)"
        if self.folder is not None:
            return f"the {self.family} model in {self.folder} ({self.parameters():,} parameters)"
        if self.hub_id is not None:
            return f"{self.hub_id} from the Hugging Face hub"
        return (
            f"a {self.n_layer}-layer GPT-2 of width {self.n_embd} ({self.parameters():,} parameters) pre-trained "
            "offline on Penn Treebank's test split"
        )

    def short_name(self) -> str:
        """The base model in a few words, with its size in millions of parameters (a table cell on a phone)."""
        if self.gguf is not None:
            return f"SmolLM2-135M-Instruct ({self.parameters() / 1e6:.0f}M)"
        if self.folder is not None:
            return f"{Path(self.folder).name} ({self.parameters() / 1e6:.2g}M)"
        if self.hub_id is not None:
            return f"{self.hub_id} (hub)"
        return f"toy GPT-2 ({self.parameters() / 1e6:.2g}M)"

    def max_rank(self) -> int:
        """The largest LoRA rank every adapted projection admits: min(n, m) over them (GPT-2's c_attn is
        3 n_embd x n_embd; Llama's q_proj n_embd x n_embd, its v_proj n_kv_head head widths x n_embd)."""
        if self.family == "llama":
            return min(self.n_embd, (self.n_kv_head or self.n_head) * (self.n_embd // self.n_head))
        return self.n_embd


_ADDED_FIELDS = {
    "family": "gpt2",
    "n_kv_head": None,
    "n_inner": None,
    "gguf": None,
    "folder": None,
    "folder_sha256": None,
}


@dataclass(frozen=True)
class Hparams:
    """A fine-tuning method's budget: epochs, the learning rates its sweep tries, batch size.

    Every method's learning rate is chosen by one rule: the rate of ``lr_grid`` whose model,
    trained on the auxiliary part (never on members), has the lowest validation perplexity.
    """

    epochs: int
    lr_grid: tuple[float, ...]
    batch_size: int

    def __post_init__(self) -> None:
        if not self.lr_grid or any(not lr > 0 for lr in self.lr_grid):
            raise ValueError(f"lr_grid must hold positive learning rates, got {self.lr_grid}")


@dataclass(frozen=True)
class DPConfig:
    """DP-SGD's noise multiplier, clipping norm and target delta."""

    noise_multiplier: float = 1.0
    max_grad_norm: float = 1.0
    delta: float = 1e-5


@dataclass(frozen=True)
class RowScaleConfig:
    """Row scaling (paper A, eq. 22): every row of a per-sample B-gradient gets norm (1 - delta) sqrt(r) c."""

    delta: float = 0.5
    c: float = 1.0

    def __post_init__(self) -> None:
        if not 0 < self.delta <= 0.5:
            raise ValueError(f"delta must lie in (0, 1/2] (paper A, section 5), got {self.delta}")
        if not self.c > 0:
            raise ValueError(f"the row-norm constant c must be positive, got {self.c}")


@dataclass(frozen=True)
class EngineScale:
    """Everything that sets the size of a membership-inference run at one scale.

    Attributes:
        model: the base model (pre-trained offline, or ``hub_id`` at paper scale).
        dense: training defaults of the methods without a rank (full, adapter).
        lora: training defaults of the LoRA-type methods (lora, flora, dpsgd).
        datasets: the datasets the command line runs when ``--datasets`` is not given.
        max_texts_per_part: texts kept in each of members, auxiliary, non-members (None: all).
        part_caps: per-dataset exceptions to ``max_texts_per_part``, as (dataset, cap) pairs: corpora of
            long texts (e-mails, abstracts: ten to twenty times a PTB line) get fewer texts per part, so
            that each dataset costs about the same training time (see :meth:`texts_per_part`).
        max_validation_texts: texts kept for validation perplexity (None: all).
        max_windows_per_text: context windows kept of each text, from its start (None: all): a long text
            (an e-mail, an abstract) cut to its beginning, so that every text costs the same.
        synthetic_count: size of the synthetic e-mail corpus.
        bootstrap_resamples: bootstrap resamples behind every confidence interval.
        dp: DP-SGD settings.
        rowscale: row-scaling settings (method ``rowscale``).
        sgd_lr_grid: the rates swept for the methods that train with SGD (``adaptersgd``), with the epochs and
            batch size of their family; empty where the scale declares none (``--lr-grid`` then gives them).
        peft_config: a user's LoRA recipe (``--peft-config``), as the canonical JSON text of
            ``mia.engine.recipe.read_peft_config``: method ``lora`` adapts the modules it names with its rank,
            alpha and dropout instead of the engine's own LoRA (None: the engine's).

    The paper states 20 epochs and learning rate 1e-5 with a linear schedule, not the
    optimiser; the code it follows used AdamW and 1e-4 for PEFT methods.  The paper scale's
    sweeps hold those rates; the CPU scales sweep larger rates with fewer epochs (small
    models, few steps).
    """

    model: ModelSpec
    dense: Hparams
    lora: Hparams
    datasets: tuple[str, ...] = ("ptb", "synthetic-email")
    max_texts_per_part: int | None = 1500
    part_caps: tuple[tuple[str, int], ...] = ()
    max_validation_texts: int | None = 500
    max_windows_per_text: int | None = None
    synthetic_count: int = 1200
    bootstrap_resamples: int = 200
    dp: DPConfig = field(default_factory=DPConfig)
    rowscale: RowScaleConfig = field(default_factory=RowScaleConfig)
    sgd_lr_grid: tuple[float, ...] = ()
    peft_config: str | None = None

    def __post_init__(self) -> None:
        if any(not rate > 0 for rate in self.sgd_lr_grid):
            raise ValueError(f"sgd_lr_grid must hold positive rates, got {self.sgd_lr_grid}")
        if any(not cap >= 1 for _, cap in self.part_caps):
            raise ValueError(f"part_caps must be positive text counts, got {self.part_caps}")
        if self.max_windows_per_text is not None and self.max_windows_per_text < 1:
            raise ValueError(f"max_windows_per_text must be at least 1 (None: all), got {self.max_windows_per_text}")

    def texts_per_part(self, dataset: str) -> int | None:
        """How many texts of ``dataset`` each of members, auxiliary and non-members keeps (None: all)."""
        return dict(self.part_caps).get(dataset, self.max_texts_per_part)

    def hparams(self, ranked: bool) -> Hparams:
        """The defaults of a LoRA-type method (``ranked``) or of a dense one."""
        return self.lora if ranked else self.dense


# The default scale's engine: a 2-layer GPT-2 of width 64, six epochs.
SMALL_ENGINE = EngineScale(
    model=ModelSpec(),
    dense=Hparams(epochs=4, lr_grid=(3e-4, 1e-3, 3e-3), batch_size=16),
    lora=Hparams(epochs=4, lr_grid=(3e-3, 1e-2, 3e-2), batch_size=16),
    max_texts_per_part=800,
    max_validation_texts=300,
    synthetic_count=900,
    sgd_lr_grid=(0.03, 0.1, 0.3, 1.0),  # SGD's steps are its rate times the gradient: far larger rates than AdamW's
)


@dataclass(frozen=True)
class Scale:
    """Sizes of one run scale.

    Attributes:
        name: the value of ``LORAPRIV_SCALE`` that selects this scale.
        description: what the scale is for, in one sentence.
        mc_draws: Monte Carlo draws per estimate in the moment checks.
        mc_chunk: draws generated at once (bounds memory, not the result).
        noise_draws: draws of the full noise matrix N = G (A^T A - I) (section 3).
        element_draws: exact draws of one noise element (sections 3 and 4).
        m_grid: input dimensions m swept in section 4.
        r_grid: ranks r swept in sections 3 and 4.
        dyn_steps: training lengths T for the dynamics of section 2.
        dyn_lrs: number of learning rates in the section 2 sweep.
        attack_trials: trials per attack setting on paper B's matrix mechanism (half with the target in).
        seed: the root seed from which every random stream is derived.
        engine: the membership-inference engine's sizes (section 6).
    """

    name: str
    description: str
    mc_draws: int
    mc_chunk: int
    noise_draws: int = 20_000
    element_draws: int = 1_000_000
    m_grid: tuple[int, ...] = (16, 64, 256, 1024, 4096, 16384)
    r_grid: tuple[int, ...] = (1, 2, 4, 8, 16, 32, 64)
    dyn_steps: tuple[int, ...] = (25, 100, 400)
    dyn_lrs: int = 9
    attack_trials: int = 2000
    seed: int = 20240926
    engine: EngineScale = SMALL_ENGINE

    def as_dict(self) -> dict:
        return asdict(self)


SCALES: dict[str, Scale] = {
    "cpu-small": Scale(
        name="cpu-small",
        description="the default: every notebook in minutes on a 2-core laptop; used by `make book` and CI",
        mc_draws=400_000,
        mc_chunk=200_000,
    ),
    "cpu-large": Scale(
        name="cpu-large",
        description="a larger CPU run (tens of minutes to hours) that tightens every error bar",
        mc_draws=20_000_000,
        mc_chunk=1_000_000,
        noise_draws=200_000,
        element_draws=20_000_000,
        m_grid=(16, 64, 256, 1024, 4096, 16384, 65536),
        r_grid=(1, 2, 4, 8, 16, 32, 64, 128),
        dyn_steps=(25, 100, 400, 1600),
        dyn_lrs=17,
        attack_trials=20_000,
        # A 4-layer GPT-2 of width 128 (5.7 times the default's parameters) on Penn Treebank and the real
        # Enron and PubMed samples (a data folder at run time): Table 1's grid, one seed, on 2 cores (two
        # shards of one thread; each record holds its wall time).  Long-text corpora keep fewer texts per part.
        engine=EngineScale(
            model=ModelSpec(
                n_layer=4,
                n_embd=128,
                n_head=4,
                block_size=128,
                vocab_size=4096,
                pretrain_epochs=8,
                pretrain_lr=2e-3,
                batch_size=16,
            ),
            dense=Hparams(epochs=4, lr_grid=(1e-4, 3e-4, 1e-3), batch_size=16),
            lora=Hparams(epochs=4, lr_grid=(1e-3, 3e-3, 1e-2), batch_size=16),
            datasets=("ptb", "enron", "pubmed"),
            max_texts_per_part=1500,
            part_caps=(("enron", 400), ("pubmed", 300)),
            max_validation_texts=500,
            synthetic_count=4500,
            bootstrap_resamples=500,
            sgd_lr_grid=(0.03, 0.1, 0.3, 1.0),
        ),
    ),
    "cpu-pretrained": Scale(
        name="cpu-pretrained",
        description="a real pretrained language model offline (SmolLM2-135M-Instruct, not GPT-2) on PTB, Enron, "
        "PubMed: hours on 2 cores, its records committed",
        mc_draws=400_000,
        mc_chunk=200_000,
        # SmolLM2-135M-Instruct (lorapriv_utils.mia.engine.pretrained): Llama architecture, 30 blocks of width 576, 9
        # query and 3 key/value heads, GPT-2's size class (134.5M parameters against 124.4M), its 4-bit GGUF
        # weights dequantised to float32.  Each text is cut to its first 128-token window, so that an e-mail
        # or an abstract costs one window.  LoRA and the adapters sit on q_proj and v_proj.
        engine=EngineScale(
            model=ModelSpec(
                n_layer=30,
                n_embd=576,
                n_head=9,
                n_kv_head=3,
                n_inner=1536,
                block_size=128,
                vocab_size=49152,
                family="llama",
                gguf="smollm2-135m-instruct",
            ),
            # each grid's top rate was added when the runs before chose the old top at their edge (first 3e-3 and
            # 1e-4, then Enron's 1e-2 and 3e-4, then Enron adapter's 1e-3)
            dense=Hparams(epochs=2, lr_grid=(1e-5, 3e-5, 1e-4, 3e-4, 1e-3, 3e-3), batch_size=8),
            lora=Hparams(epochs=2, lr_grid=(3e-4, 1e-3, 3e-3, 1e-2, 3e-2), batch_size=8),
            datasets=("ptb", "enron", "pubmed"),
            max_texts_per_part=200,
            max_validation_texts=100,
            max_windows_per_text=1,
            bootstrap_resamples=500,
            # SGD's rates were chosen before any SGD run (0.03 to 3); 0.01 was added when PubMed's first sweep found
            # its best at 0.03, the old bottom (0.3 and up blow the perplexity up to hundreds or more)
            sgd_lr_grid=(0.01, 0.03, 0.1, 0.3, 1.0, 3.0),
        ),
    ),
    "paper": Scale(
        name="paper",
        description="the papers' own scale: GPT-2 117M on hub data, meant for a GPU machine with internet",
        mc_draws=100_000_000,
        mc_chunk=4_000_000,
        noise_draws=1_000_000,
        element_draws=100_000_000,
        m_grid=(16, 64, 256, 1024, 4096, 16384, 65536, 262144),
        r_grid=(1, 2, 4, 8, 16, 32, 64, 128, 256),
        dyn_steps=(25, 100, 400, 1600, 6400),
        dyn_lrs=25,
        attack_trials=100_000,
        engine=EngineScale(
            model=ModelSpec(
                n_layer=12,
                n_embd=768,
                n_head=12,
                block_size=1024,
                vocab_size=50257,
                hub_id="gpt2",
                hub_revision=GPT2_REVISION,
            ),
            dense=Hparams(epochs=20, lr_grid=(3e-6, 1e-5, 3e-5), batch_size=8),
            lora=Hparams(epochs=20, lr_grid=(3e-5, 1e-4, 3e-4), batch_size=8),
            datasets=("ptb", "enron", "pubmed"),
            max_texts_per_part=None,
            max_validation_texts=None,
            bootstrap_resamples=1000,
            sgd_lr_grid=(1e-3, 1e-2, 1e-1, 1.0),  # chosen without a run (the paper states 1e-5, an AdamW-sized rate)
        ),
    ),
}


def get_scale(name: str) -> Scale:
    """Return the scale called ``name``; a clear ValueError lists the valid names otherwise."""
    try:
        return SCALES[name]
    except KeyError:
        valid = ", ".join(SCALES)
        raise ValueError(f"unknown scale {name!r} (from {ENV_VAR} or --scale); valid scales are: {valid}") from None


def current_scale() -> Scale:
    """The scale selected by ``LORAPRIV_SCALE`` (``cpu-small`` when unset or empty)."""
    return get_scale(os.environ.get(ENV_VAR, "").strip() or DEFAULT_SCALE)
