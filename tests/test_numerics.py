"""Golden tripwires of the numerics versions (``lorapriv_utils.store.NUMERICS``).

Each tripwire runs one component on a tiny input (a tiny GPT-2 trained for a few steps, a small corpus)
and compares its numbers with the values pinned in ``numerics_golden.json``.  When they move while the
component's version is the one they were pinned at, the test fails and names the version to bump: a
change that moves numbers must bump it (which re-keys exactly the records that use the component), and
a refactor that keeps the numbers passes and re-keys nothing.

``python tests/test_numerics.py --repin`` recomputes and rewrites the pins (after a bump, on purpose).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

GOLDEN = Path(__file__).with_name("numerics_golden.json")
# The tripwires compute in float64 (torch's default dtype set for the call): in float32, Min-K%++'s one-pass
# variance and a few steps of training moved these by up to 2e-3 between two x86 CPUs, which no tolerance can
# tell from a change of code.  In float64 another CPU moves them by about 1e-12; a change of code by far more.
RTOL = 1e-8


def _tiny():
    import ddp_driver

    return ddp_driver.tiny_base()  # the engine tests' one tiny model, untrained


def _windows(seed: int = 0, texts: int = 16):
    from lorapriv_utils.mia.engine.data import text_windows

    rng = np.random.default_rng(seed)
    rows = [list(rng.integers(1, 300, size=int(rng.integers(5, 20)))) + [0] for _ in range(texts)]
    return text_windows(rows, 12)  # ddp_driver.TINY's context


def _scores(model) -> list[float]:
    from lorapriv_utils.mia.engine.training import text_scores

    values = text_scores(model, _windows(1))
    return [*values["loss"].tolist(), *values["minkpp"].tolist()]


def _fine_tuned(method: str, rank: int | None = None) -> list[float]:
    from lorapriv_utils.mia.engine import finetune, methods
    from lorapriv_utils.mia.engine.training import TrainConfig
    from lorapriv_utils.scale import DPConfig, RowScaleConfig

    cfg = TrainConfig(epochs=2, lr=1e-2, batch_size=4, seed=3, optimizer=methods.get(method).optimizer)
    model, _ = finetune.fine_tune(
        _tiny(), method, _windows(0), cfg, rank=rank, dp=DPConfig(noise_multiplier=0.7), rowscale=RowScaleConfig()
    )
    return _scores(model)


def _compressed() -> list[float]:
    from lorapriv_utils.mia.engine import compressed
    from lorapriv_utils.mia.engine.training import TrainConfig
    from lorapriv_utils.mia.experiments import dp_compare
    from lorapriv_utils.scale import DPConfig

    model, params = dp_compare.dp_parameters(_tiny(), "adapter", None, 3)
    cfg = TrainConfig(epochs=2, lr=1e-2, batch_size=4, seed=3)
    trained, _ = compressed.compressed_train(model, params, _windows(0), cfg, DPConfig(noise_multiplier=0.7), 4)
    return _scores(trained)


def _dp_weights() -> list[float]:
    from lorapriv_utils.mia.engine import dp
    from lorapriv_utils.mia.engine.training import TrainConfig
    from lorapriv_utils.mia.experiments import dp_compare
    from lorapriv_utils.scale import DPConfig

    model, params = dp_compare.dp_parameters(_tiny(), "lorafa", 4, 3, a_seed=5)
    cfg = TrainConfig(epochs=2, lr=1e-2, batch_size=4, seed=3)
    trained, stats = dp.dp_train(model, params, _windows(0), cfg, DPConfig(noise_multiplier=0.7))
    return [*_scores(trained), stats["epsilon"], stats["epsilon_rdp"]]


def _split() -> list[str]:
    from lorapriv_utils.mia.engine import data

    texts = data.synthetic_emails(90, 4)
    corpus = data.Corpus("synthetic-email", texts[:80] + texts[:5], texts[80:])
    split = data.split_corpus(corpus, 2)
    return [data.texts_digest(part) for part in (split.members, split.auxiliary, split.nonmembers, split.validation)]


def _tokenizer() -> list[int]:
    from lorapriv_utils.mia.engine import data, tokenization

    texts = data.synthetic_emails(60, 1)
    tokenizer = tokenization.train_small_bpe(texts, vocab_size=400)
    return [i for text in texts[:3] for i in tokenizer.encode(text)]


def _pretraining() -> list[float]:
    from lorapriv_utils.mia.engine.training import TrainConfig, train_language_model

    model = _tiny()
    blocks = np.random.default_rng(2).integers(0, 300, size=(16, 12))
    train_language_model(model, blocks, TrainConfig(epochs=1, lr=3e-3, batch_size=8, seed=0))
    return _scores(model)


def _attack_metrics() -> list[float]:
    from lorapriv_utils.mia.experiments.cell_metrics import attack_metrics

    rng = np.random.default_rng(9)
    members, nonmembers = rng.normal(0.3, 1, 120), rng.normal(0, 1, 120)
    metrics = attack_metrics(members, nonmembers, np.random.default_rng([0, 99]), 50)
    auc, tpr = metrics["auc"], metrics["tpr_at_0.01"]
    return [auc["value"], auc["low"], auc["high"], tpr.get("value", -1.0), tpr.get("low", -1.0)]


# tripwire name: (the components whose numbers it pins, the computation)
TRIPWIRES = {
    "corpus-split": (("corpus-split",), _split),
    "tokenizer": (("tokenizer",), _tokenizer),
    "text-scores": (("text-scores",), lambda: _scores(_tiny())),
    "base-pretraining": (("base-pretraining", "training-loop"), _pretraining),
    "full": (("training-loop", "full"), lambda: _fine_tuned("full")),
    "frozenemb": (("training-loop", "full", "frozenemb"), lambda: _fine_tuned("frozenemb")),
    "adapter": (("training-loop", "adapter"), lambda: _fine_tuned("adapter")),
    "adaptersgd": (("training-loop", "adapter"), lambda: _fine_tuned("adaptersgd")),
    "lora": (("training-loop", "lora"), lambda: _fine_tuned("lora", 4)),
    "lorafa": (("training-loop", "lora", "lorafa"), lambda: _fine_tuned("lorafa", 4)),
    "lorafixed": (("training-loop", "lora", "lorafa", "lorafixed"), lambda: _fine_tuned("lorafixed", 4)),
    "flora": (("training-loop", "lora", "flora"), lambda: _fine_tuned("flora", 4)),
    "dpsgd": (("lora", "dpsgd"), lambda: _fine_tuned("dpsgd", 4)),
    "rowscale": (("lora", "lorafa", "rowscale"), lambda: _fine_tuned("rowscale", 4)),
    "dp-weights": (("lora", "lorafa", "dpsgd", "dp-compare"), _dp_weights),
    "compressed": (("adapter", "dpsgd", "compressed"), _compressed),
    "attack-metrics": (("attack-metrics",), _attack_metrics),
}


def _in_float64(compute):
    """``compute()`` with torch's default dtype float64 (the tiny model and every tensor it makes)."""
    import torch

    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        return compute()
    finally:
        torch.set_default_dtype(previous)


def _golden() -> dict:
    return json.loads(GOLDEN.read_text(encoding="utf-8"))


def _same(pinned, measured) -> bool:
    if len(pinned) != len(measured):
        return False
    if all(isinstance(x, str | int) and not isinstance(x, float) for x in pinned):
        return list(pinned) == list(measured)
    return bool(np.allclose(np.asarray(measured, float), np.asarray(pinned, float), rtol=RTOL, atol=1e-7))


def test_every_tripwire_component_is_declared_and_every_method_has_a_tripwire():
    from lorapriv_utils.mia.engine.methods import REGISTRY
    from lorapriv_utils.store import NUMERICS

    for components, _ in TRIPWIRES.values():
        assert set(components) <= set(NUMERICS)
    pinned_components = {c for components, _ in TRIPWIRES.values() for c in components}
    assert {c for m in REGISTRY.values() for c in m.components} <= pinned_components


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(TRIPWIRES))
def test_numbers_move_only_with_a_version_bump(name):
    import torch

    from lorapriv_utils.store import NUMERICS

    torch.set_num_threads(1)
    components, compute = TRIPWIRES[name]
    golden = _golden()
    pinned = golden["values"][name]
    pinned_versions = {c: golden["versions"][c] for c in components}
    current = {c: NUMERICS[c] for c in components}
    measured = _in_float64(compute)
    if _same(pinned, measured):
        assert current == pinned_versions, (
            f"{name}: the numbers are the pinned ones, yet the version of {components} moved from "
            f"{pinned_versions} to {current}: a bump re-keys records for nothing; revert it, or re-pin "
            "with `python tests/test_numerics.py --repin` if the bump goes with a change of numbers"
        )
        return
    assert current != pinned_versions, (
        f"{name}: the numbers of {', '.join(components)} moved while their numerics versions stayed at "
        f"{pinned_versions}. If the change is on purpose, bump the version of the component that changed in "
        "lorapriv_utils/store.py (NUMERICS; it re-keys only the records that use it) and re-pin with "
        "`python tests/test_numerics.py --repin`; if not, the change is a bug"
    )
    pytest.fail(f"{name}: numerics version bumped; re-pin with `python tests/test_numerics.py --repin`")


def _repin() -> None:
    import torch

    from lorapriv_utils.store import NUMERICS

    torch.set_num_threads(1)
    values = {name: _in_float64(compute) for name, (_, compute) in sorted(TRIPWIRES.items())}
    GOLDEN.write_text(json.dumps({"versions": NUMERICS, "values": values}, indent=1, sort_keys=True) + "\n")
    print(f"wrote {GOLDEN}")


if __name__ == "__main__":
    if sys.argv[1:] != ["--repin"]:
        raise SystemExit("usage: python tests/test_numerics.py --repin")
    _repin()
