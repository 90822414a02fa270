"""The DP game played against LoRA with A frozen and no noise, on the engine's GPT-2 (paper B's matrix case,
"LoRA is not inherently private"; paper A's later claim of DP by design for frozen A).

The mechanism: LoRA-FA on ``c_attn`` (A drawn N(0, 1/r) and frozen, B trained), full-batch gradient
descent with plain SGD for a fixed number of steps, so that the only randomness of training is A.  The
release is the adapter, A included, as a LoRA checkpoint ships it.  The adversary of the DP game knows the
other texts D' and the candidate x, the base model and the recipe, and must say whether the release was
trained on D' + {x} ("in") or on D' ("out").

* **A released.**  It replays training on D' with the released A and measures how far the release's B
  lies from the replay's.  In the "out" world the two are one deterministic computation and coincide; in
  the "in" world they differ.  One observation decides: TPR 1 at FPR 0, whatever the rank, so no finite
  epsilon holds.  The replay is run separately from the release, so the check fails if training is not a
  deterministic function of (data, A).
* **A kept secret, naive (control).**  The adversary replays with an A' of its own (same law) and compares
  the merged updates B A, the only thing it then sees.
* **A kept secret, fitted.**  The merged update of a layer, B A, has A's row space, and the trajectory of
  B A depends on A only through A^T A = Q^T K Q (Q an orthonormal basis of that row space, K = M^T M for
  A = M Q; B starts at 0, the LoRA scaling is 1).  The adversary reads Q off the release (its top r right
  singular vectors), starts from K = (m/r) I and alternates: replay training on D' with A' = K^{1/2} Q; since the
  replay's B equals X K^{1/2} with X the replay's accumulated gradient, times -lr, in the row-space
  coordinates, refit K by least squares to the release's B A Q^T = X K (over-relaxed); repeat.  In the "out"
  world a K that reproduces the release exists (the true one); in the "in" world the target's gradient is missing
  from X, and the remaining distance tells the worlds apart.  This is paper B's matrix-case argument (chapter
  b2, M recovered from the other columns) on a trained model.  Each release is fitted at every relaxation of
  ``FIT_RELAXES`` and the distance kept after every refit, so that the chapter can choose the relaxation and the
  number of refits on some targets and read the attack on others.  Records of schema 1 started from K = I,
  m/r times smaller than K's typical size ((m/r) I: A's N(0, 1/r) entries give trace K = ||A||_F^2 about m, the
  input width), and fitted at one relaxation; schema 2 starts from (m/r) I, the size the adversary knows from
  the recipe.
"""

from __future__ import annotations

import copy
import json
import math
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch
from tqdm.auto import tqdm

from ...files import atomic_write_text
from ...numbers import check_order
from ...provenance import measured_on, refresh_stamp
from ..attacks import metrics as mia_metrics
from ..engine import finetune
from ..engine.data import TextWindows
from ..engine.training import TrainConfig, block_loader, linear_schedule, make_optimizer, run_training
from .scoring import perplexity
from .workspace import Workspace

RANKS = (1, 8, 64)
BLIND_SEED_OFFSET = 1000  # the control's A': the LoRA start of seed + this offset
FIT_ROUNDS, FIT_RELAX = 5, 1.5  # refits of K in the fitted secret-A attack (one replay each), over-relaxed
FIT_RELAXES = (1.0, 1.5, 2.0)  # every relaxation the game records, fixed before schema 2's run; FIT_RELAX among them
TARGET_STREAM = 7
ARMS = ("known", "blind", "fitted")


@dataclass(frozen=True)
class GameConfig:
    """Size of the game: |D' + {x}| texts, candidates x tried, full-batch SGD steps and learning rate."""

    texts: int = 100
    targets: int = 16
    steps: int = 10
    lr: float = 1.0

    def __post_init__(self) -> None:
        for name in ("texts", "targets", "steps"):
            if check_order(name, getattr(self, name)) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        if not 2 <= self.targets <= self.texts:
            raise ValueError(f"targets must lie in [2, texts = {self.texts}], got {self.targets}")
        if not self.lr > 0:
            raise ValueError(f"lr must be positive, got {self.lr}")


def subset(windows: TextWindows, texts: list[int]) -> TextWindows:
    """The windows of ``texts`` (in that order), their owners renumbered 0, 1, ..."""
    if len(set(texts)) != len(texts) or not all(0 <= t < windows.n_texts for t in texts):
        raise ValueError(f"texts must be distinct indices in [0, {windows.n_texts}), got {texts}")
    local = {t: i for i, t in enumerate(texts)}
    rows = np.flatnonzero(np.isin(windows.owner, texts))
    owners = np.array([local[t] for t in windows.owner[rows]])
    order = np.argsort(owners, kind="stable")
    return TextWindows(windows.ids[rows[order]], owners[order], len(texts))


def release(base, windows: TextWindows, rank: int, a_seed: int, game: GameConfig) -> dict:
    """LoRA-FA trained by full-batch SGD (A from ``a_seed``): B and the merged update B A of every layer, flat
    (float64), and the trained model."""
    cfg = TrainConfig(epochs=game.steps, lr=game.lr, batch_size=len(windows.ids), seed=a_seed, optimizer="sgd")
    model, _ = finetune.fine_tune(copy.deepcopy(base), "lorafa", windows, cfg, rank=rank)
    layers = finetune.lora_layers(model)
    with torch.no_grad():
        return {
            "B": torch.cat([layer.lora_B["default"].weight.reshape(-1) for layer in layers]).double(),
            "merged": torch.cat([layer.get_delta_weight("default").reshape(-1) for layer in layers]).double(),
            "model": model,
        }


def paper_updates(model) -> list[np.ndarray]:
    """Each adapted layer's merged update B A (output width x input width, with LoRA's scaling), float64."""
    with torch.no_grad():
        return [
            (layer.lora_B["default"].weight @ layer.lora_A["default"].weight).double().numpy()
            * layer.scaling["default"]
            for layer in finetune.lora_layers(model)
        ]


def replay_from(base, windows: TextWindows, rank: int, starts: list[np.ndarray], game: GameConfig) -> dict:
    """The release's recipe (LoRA-FA, full-batch SGD, linear decay) run from the given A of every layer instead
    of a seeded draw: each layer's B (float64) and merged update (paper layout)."""
    cfg = TrainConfig(epochs=game.steps, lr=game.lr, batch_size=len(windows.ids), seed=0, optimizer="sgd")
    model, params, _ = finetune.prepare(copy.deepcopy(base), "lorafa", rank, cfg.seed)
    layers = finetune.lora_layers(model)
    if any(layer.scaling["default"] != 1 for layer in layers):
        raise ValueError("the fitted attack assumes LoRA's scaling is 1 (lora_alpha = r); the refit ignores it")
    if len(starts) != len(layers) or any(
        a.shape != tuple(x.lora_A["default"].weight.shape) for a, x in zip(starts, layers, strict=True)
    ):
        raise ValueError(
            f"starts must be {len(layers)} matrices of shape (r, m) = {tuple(layers[0].lora_A['default'].weight.shape)}"
        )
    with torch.no_grad():
        for layer, a in zip(layers, starts, strict=True):
            layer.lora_A["default"].weight.copy_(torch.as_tensor(a, dtype=layer.lora_A["default"].weight.dtype))
    loader = block_loader(windows.ids, cfg.batch_size, cfg.seed)
    optimizer = make_optimizer(params, cfg)
    run_training(model, loader, optimizer, linear_schedule(optimizer, cfg.epochs * len(loader), 0.0), cfg.epochs)
    with torch.no_grad():
        b = [layer.lora_B["default"].weight.double().numpy() for layer in layers]
    return {"B": b, "merged": paper_updates(model)}


def _psd_root(k: np.ndarray) -> np.ndarray:
    values, vectors = np.linalg.eigh((k + k.T) / 2)
    return (vectors * np.sqrt(np.clip(values, 1e-8 * max(values.max(), 1e-300), None))) @ vectors.T


def fitted_distance(
    base,
    rest: TextWindows,
    rank: int,
    merged: list[np.ndarray],
    game: GameConfig,
    rounds: int = FIT_ROUNDS,
    relax: float = FIT_RELAX,
) -> dict:
    """The fitted secret-A attack on one release (its merged updates, paper layout): relative distance between the
    release and the replay on ``rest`` after ``rounds`` refits of K (each moved ``relax`` times the way to the
    least-squares fit: the plain refit converges slowly), with the distance after each replay."""
    if rounds < 0 or not relax > 0:
        raise ValueError(f"rounds must be >= 0 and relax > 0, got {rounds} and {relax}")
    bases = [np.linalg.svd(w, full_matrices=False)[2][:rank] for w in merged]  # Q: (r, m), orthonormal rows
    ks = [np.eye(rank) * q.shape[1] / rank for q in bases]  # K's typical size for N(0, 1/r) entries: (m/r) I
    norm = math.sqrt(sum(float((w * w).sum()) for w in merged))
    history = []
    for round_ in range(rounds + 1):
        roots = [_psd_root(k) for k in ks]
        replay = replay_from(base, rest, rank, [r @ q for r, q in zip(roots, bases, strict=True)], game)
        history.append(
            math.sqrt(sum(float(((w - v) ** 2).sum()) for w, v in zip(merged, replay["merged"], strict=True))) / norm
        )
        if round_ == rounds:
            break
        for i, (w, q, root, b) in enumerate(zip(merged, bases, roots, replay["B"], strict=True)):
            x = b @ np.linalg.inv(root)  # the replay's accumulated gradient step, in Q's coordinates (n x r)
            ks[i] = ks[i] + relax * (np.linalg.lstsq(x, w @ q.T, rcond=None)[0] - ks[i])
    return {"distance": history[-1], "history": history}


def play(
    work: Workspace,
    rank: int,
    game: GameConfig,
    dataset: str = "ptb",
    seed: int = 0,
    rounds: int = FIT_ROUNDS,
    relaxes: tuple[float, ...] = FIT_RELAXES,
) -> dict:
    """The game at one rank: distances in both worlds for the released-A and the secret-A adversary, the fitted
    one's after every refit at every relaxation of ``relaxes`` (its summary: at ``FIT_RELAX``)."""
    if FIT_RELAX not in relaxes:
        raise ValueError(f"relaxes must include FIT_RELAX = {FIT_RELAX:g}, got {relaxes}")
    base = work.base()[0]
    finetune.check_method("lorafa", rank, base)
    prepared = work.dataset(dataset, seed)
    if game.texts > prepared.members.n_texts:
        raise ValueError(f"the game needs {game.texts} texts, the members hold {prepared.members.n_texts}")
    members = list(range(game.texts))
    full = subset(prepared.members, members)
    world_in = release(base, full, rank, seed, game)
    # schema 2 draws its targets afresh (stream 7; schema 1: 5), apart from those its fit's settings were tuned on
    targets = np.random.default_rng([seed, rank, TARGET_STREAM]).choice(game.texts, game.targets, replace=False)
    rows = []
    for x in tqdm(targets.tolist(), desc=f"DP game r={rank}", disable=not work.progress, leave=False):
        rest = subset(prepared.members, [t for t in members if t != x])
        world_out = release(base, rest, rank, seed, game)
        replay = release(base, rest, rank, seed, game)  # the adversary's own run with the released A
        blind = release(base, rest, rank, seed + BLIND_SEED_OFFSET, game)  # ... with an A' of its own
        fits_in, fits_out = (
            {relax: fitted_distance(base, rest, rank, updates, game, rounds, relax) for relax in relaxes}
            for updates in (paper_updates(world_in["model"]), paper_updates(world_out["model"]))
        )
        fit_in, fit_out = fits_in[FIT_RELAX], fits_out[FIT_RELAX]
        rows.append(
            {
                "target": x,
                "known_in": float((world_in["B"] - replay["B"]).norm()),
                "known_out": float((world_out["B"] - replay["B"]).norm()),
                "blind_in": float((world_in["merged"] - blind["merged"]).norm()),
                "blind_out": float((world_out["merged"] - blind["merged"]).norm()),
                "fitted_in": fit_in["distance"],
                "fitted_out": fit_out["distance"],
                "fitted_history_in": fit_in["history"],
                "fitted_history_out": fit_out["history"],
                "fitted_histories_in": {f"{relax:g}": fit["history"] for relax, fit in fits_in.items()},
                "fitted_histories_out": {f"{relax:g}": fit["history"] for relax, fit in fits_out.items()},
            }
        )
    return summarize(rows, rank, perplexity(world_in["model"], prepared.validation, work.device), seed)


def summarize(rows: list[dict], rank: int, ppl: float, seed: int, resamples: int = 1000) -> dict:
    """AUC of "smaller distance = out" with bootstrap intervals, and the separation of the two worlds."""
    rng = np.random.default_rng([seed, rank, 6])
    out = {"rank": rank, "validation_perplexity": ppl, "targets": rows}
    for arm in ARMS:
        d_in = np.array([r[f"{arm}_in"] for r in rows])
        d_out = np.array([r[f"{arm}_out"] for r in rows])
        # a signal is lower for members (``metrics``): minus the distance, since "in" moves the release away
        auc = mia_metrics.bootstrap(mia_metrics.roc_auc, -d_in, -d_out, rng, resamples)
        out[arm] = {
            "auc": asdict(auc),
            "max_out": float(d_out.max()),
            "min_in": float(d_in.min()),
            "separated": bool(d_in.min() > d_out.max()),
        }
    return out


def summarized(rows: list[dict], seed: int) -> list[dict]:
    """Each rank's row of the game summarized again (:func:`summarize`) from its stored per-target distances."""
    return [summarize(row["targets"], row["rank"], row["validation_perplexity"], seed) for row in rows]


def refreshed(record: dict, spec: dict) -> dict:
    """A game record whose derived part alone is stale (``specs.MEASUREMENT_DERIVED``), each rank's row summarized
    again from its stored distances (no game played), the refresh stamped and the record re-sealed under ``spec``."""
    from ...store import seal

    record["rows"] = summarized(record["rows"], record["seed"])
    record["manifest"]["metrics_refreshed"] = refresh_stamp(record)
    return seal(record, spec)


def game_record(
    work: Workspace,
    ranks: tuple[int, ...] = RANKS,
    game: GameConfig | None = None,
    seed: int = 0,
    rounds: int = FIT_ROUNDS,
    parts: Path | None = None,
) -> dict | None:
    """The game at every rank, with how, where and when it was played.  With ``parts``, a folder, each rank's row
    is kept there as it finishes (with its wall time) and reused by a later call with the same settings, so that
    processes given different ``ranks`` share the work; the record is returned once every rank of ``RANKS`` has
    its row there, None before."""
    from ...store import key_of, trained_key
    from ..records.specs import measurement_spec

    game = game or GameConfig()
    # the record's key (code, base model, libraries; not its derived metrics, which the record's assembly summarizes
    # again) among the settings: a rank kept by older code is played again
    spec_key = trained_key(key_of(measurement_spec("whitebox", work.scale)))
    settings = {"game": asdict(game), "seed": seed, "rounds": rounds, "relaxes": list(FIT_RELAXES), "key": spec_key}

    def kept(r: int) -> Path:  # where a rank's row is kept
        return Path(parts) / f"{work.scale.name}-r{r}.json"

    def stored(r: int) -> dict | None:  # the rank's kept row, where it was played with these settings
        if parts is None or not kept(r).exists():
            return None
        part = json.loads(kept(r).read_text(encoding="utf-8"))
        return part if part.get("settings") == settings else None

    done = {}
    for r in ranks:
        done[r] = stored(r)
        if done[r] is None:
            start = time.perf_counter()
            row = play(work, r, game, seed=seed, rounds=rounds)
            done[r] = {"settings": settings, "row": row, "wall_seconds": time.perf_counter() - start}
            if parts is not None:
                Path(parts).mkdir(parents=True, exist_ok=True)
                atomic_write_text(kept(r), json.dumps(done[r]))
    if parts is not None:
        ranks = RANKS
        done = {r: done.get(r) or stored(r) for r in ranks}
    if any(done[r] is None for r in ranks):
        return None
    rows = [done[r]["row"] for r in ranks]
    return {
        # each rank's summary again from its distances: a kept row may predate the attack metrics' numerics
        "rows": summarized(rows, seed),
        "game": asdict(game),
        "fit": {"rounds": rounds, "relax": FIT_RELAX, "relaxes": list(FIT_RELAXES), "start": "(m/r) I"},
        "dataset": "ptb",
        "seed": seed,
        "scale": work.scale.name,
        "split_hashes": work.dataset("ptb", seed).split_hashes,
        "base": work.base()[2],
        "measured_on": {**measured_on(), "torch_threads": torch.get_num_threads()},
        "wall_seconds": sum(done[r]["wall_seconds"] for r in ranks),
    }


def main(argv: list[str] | None = None) -> None:
    """``python -m lorapriv_utils.mia.experiments.whitebox PATH.json [--threads N] [--ranks R,..] [--parts DIR]``:
    the game at the scale of ``LORAPRIV_SCALE``, written atomically with its checksum.  With ``--parts``, each rank's
    row is kept in DIR as it finishes, so that processes given different ranks share the game (and a stopped one
    resumes); the record is written by the process that finds every rank there."""
    import sys

    from ...scale import current_scale
    from ...store import seal, write_record
    from ..records.specs import measurement_spec
    from .producers import parse
    from .workspace import set_threads

    args = parse("whitebox", sys.argv[1:] if argv is None else argv)
    ranks = args.ranks
    set_threads(args.threads)
    scale = current_scale()
    record = game_record(Workspace(scale, out="."), ranks=ranks, parts=args.parts)
    if record is None:
        print(f"ranks {args.ranks} kept in {args.parts}; the record is written once every rank has run there")
        return
    record = write_record(args.path, seal(record, measurement_spec("whitebox", scale), "whitebox"))
    print(f"wrote {args.path} in {record['wall_seconds']:.0f} s")
    for row in record["rows"]:
        print(
            f"r={row['rank']:>3}  ppl={row['validation_perplexity']:.1f}  "
            + "  ".join(f"{arm}: AUC {row[arm]['auc']['value']:.3f} separated={row[arm]['separated']}" for arm in ARMS)
        )


if __name__ == "__main__":
    main()
