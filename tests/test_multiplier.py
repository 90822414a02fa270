"""§5.1's multiplier on real per-text gradients (mia.multiplier) and its batch primitive (theory.projection)."""

import copy
import dataclasses
import json

import ddp_driver  # tests/ is on sys.path under pytest's default import mode
import numpy as np
import pytest
import torch

from lorapriv_utils.mia.engine import finetune
from lorapriv_utils.mia.experiments import multiplier
from lorapriv_utils.theory import projection


def test_paper_layout_is_the_side_that_peft_lora_a_projects():
    """PEFT's gradient with respect to B (B = 0) is the paper-layout W gradient times A^T: the layout is right."""
    base = ddp_driver.tiny_base()
    rows = torch.as_tensor(ddp_driver.tiny_blocks()[:2])
    plain = copy.deepcopy(base)
    weight = plain.transformer.h[0].attn.c_attn.weight  # GPT-2's Conv1D: (in, out)
    plain(rows, labels=rows).loss.backward()
    g = multiplier.paper_layout(weight.grad.detach().double().reshape(1, -1).numpy(), weight.shape, True)[0]
    peft_model, _, _ = finetune.prepare(copy.deepcopy(base), "lorafa", 2, seed=0)
    peft_model(rows, labels=rows).loss.backward()
    layer = finetune.lora_layers(peft_model)[0]
    a = layer.lora_A["default"].weight.detach().double().numpy()  # (r, m): m must be the input width
    expected = g @ a.T * layer.scaling["default"]
    assert np.allclose(layer.lora_B["default"].weight.grad.double().numpy(), expected, rtol=1e-4, atol=1e-8)
    with pytest.raises(ValueError, match="flattened gradients"):
        multiplier.paper_layout(np.zeros((2, 15)), (4, 5), True)


def test_one_row_measured_over_a_matches_the_exact_law():
    """Instrument: b = n = 1, the measured noise variance over A against the exact law of one row-scaled row."""
    row = np.random.default_rng(0).standard_normal(16)
    out = projection.batch_multiplier(row[None, None, :], 8, 0.5, 1.0, 20000, np.random.default_rng(1))
    exact, _ = projection.row_scaled_noise_law(row, 8, 0.5, 1.0)
    assert (out["z_equivalent"] * np.sqrt(8)) ** 2 == pytest.approx(exact.mean(), rel=0.05)


def test_the_plug_in_overstates_the_noise_that_shares_a():
    """Lemma 3.1 with the scaled sum held fixed ignores that row scaling uses the same A: it reads too high."""
    g = np.random.default_rng(2).standard_normal((8, 12, 40))
    out = projection.batch_multiplier(g, 8, 0.5, 1.0, 400, np.random.default_rng(3))
    assert out["z_plugin"] > 1.05 * out["z_equivalent"] > 1.05 * out["z_formula"]


def test_aligned_gradients_outgrow_the_formula_like_the_square_root_of_the_batch():
    """b identical per-sample gradients add up: the noise grows like b, the formula like sqrt(b); flipping
    their signs at random removes most of it."""
    one = np.random.default_rng(0).standard_normal((6, 20))
    g = np.repeat(one[None], 16, axis=0)
    table = multiplier.multiplier_rows(g, (4, 16), (8,), 0.5, 1.0, 3, 300, np.random.default_rng(1)).set_index("b")
    assert table.loc[16, "ratio_mean"] / table.loc[4, "ratio_mean"] == pytest.approx(2.0, rel=0.05)
    assert (table["ratio_signflip_mean"] < 0.8 * table["ratio_mean"]).all()


def test_independent_gradients_sit_above_the_formula():
    """Independent Gaussian per-sample gradients: the formula is a lower bound (the controlled 'random' geometry)."""
    g = np.random.default_rng(2).standard_normal((64, 12, 40))
    table = multiplier.multiplier_rows(g, (8,), (4, 8), 0.5, 1.0, 10, 40, np.random.default_rng(3))
    assert (table["ratio_min"] > 1).all() and (table["ratio_se"] > 0).all()
    assert list(table["batches"]) == [10, 10] and list(table["draws"]) == [40, 40]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [({"batches": 1}, "batches must be >= 2"), ({"batch_sizes": (100,)}, "batch size b = 100")],
)
def test_bad_inputs(kwargs, message):
    g = np.ones((10, 2, 4))
    args = {
        "batch_sizes": (2,),
        "ranks": (2,),
        "delta": 0.5,
        "c": 1.0,
        "batches": 3,
        "draws": 5,
        "rng": np.random.default_rng(0),
    }
    with pytest.raises(ValueError, match=message):
        multiplier.multiplier_rows(g, **{**args, **kwargs})


def test_batch_multiplier_checks_its_inputs_and_is_the_geometry_study():
    rng = np.random.default_rng(4)
    with pytest.raises(ValueError, match="shape \\(b, n, m\\)"):
        projection.batch_multiplier(np.ones((3, 9)), 4, 0.5, 1.0, 5, rng)
    with pytest.raises(ValueError, match="draws must be >= 2"):
        projection.batch_multiplier(np.ones((2, 3, 9)), 4, 0.5, 1.0, 1, rng)
    # the controlled-geometry study is this primitive on its own batches (same draws, same numbers)
    study = projection.equivalent_multiplier("random", 8, 6, 10, 4, 0.5, 1.0, np.random.default_rng(5), 7)
    rng = np.random.default_rng(5)
    g = projection.per_sample_gradients("random", 8, 6, 10, rng)
    assert projection.batch_multiplier(g, 4, 0.5, 1.0, 7, rng) == study


@pytest.mark.slow
def test_the_record_and_its_file_have_their_provenance(tmp_path, monkeypatch, tiny_scale, engine_cache):
    monkeypatch.setenv("LORAPRIV_CACHE_DIR", str(engine_cache))  # the session's tiny base, pre-trained once
    engine = dataclasses.replace(tiny_scale.engine, model=ddp_driver.TINY)
    scale = dataclasses.replace(tiny_scale, engine=engine)
    record = multiplier.record(scale, texts=12, batch_sizes=(4,), ranks=(2,), batches=3, draws=4)
    assert (record["n"], record["m"]) == (48, 16)
    assert record["table"]["b"] == [4] and record["table"]["batches"] == [3] and record["table"]["draws"] == [4]
    assert set(record) >= {"base", "measured_on", "wall_seconds", "delta", "c"}
    monkeypatch.setattr(multiplier, "record", lambda s: {**record, "wall_seconds": 0.0})
    multiplier.main([str(tmp_path / "out.json")])
    assert json.loads((tmp_path / "out.json").read_text())["table"] == record["table"]
    with pytest.raises(SystemExit, match="usage"):
        multiplier.main([])
