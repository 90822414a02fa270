"""§5.1's multiplier on real per-text gradients (mia.multiplier) and its batch primitive (theory.projection)."""

import dataclasses
import json

import numpy as np
import pytest

from lorapriv_utils.mia import multiplier
from lorapriv_utils.scale import ModelSpec
from lorapriv_utils.theory import projection


def test_paper_layout_puts_the_input_width_last():
    d_in, d_out = 3, 5
    grads = np.arange(2 * d_in * d_out, dtype=float).reshape(2, d_in * d_out)
    g = multiplier.paper_layout(grads, d_in, d_out)
    conv = grads.reshape(2, d_in, d_out)  # GPT-2's Conv1D weight: (in, out)
    assert g.shape == (2, d_out, d_in)
    assert all(g[t, j, i] == conv[t, i, j] for t in range(2) for i in range(d_in) for j in range(d_out))
    with pytest.raises(ValueError, match="flattened gradients"):
        multiplier.paper_layout(grads, 4, 5)


def test_aligned_gradients_outgrow_the_formula_like_the_square_root_of_the_batch():
    """b identical per-sample gradients add up: the noise grows like b, the formula like sqrt(b)."""
    rng = np.random.default_rng(0)
    one = rng.standard_normal((6, 20))
    g = np.repeat(one[None], 16, axis=0)
    table = multiplier.multiplier_rows(g, (4, 16), (8,), 0.5, 1.0, 400, np.random.default_rng(1)).set_index("b")
    assert table.loc[16, "ratio_mean"] / table.loc[4, "ratio_mean"] == pytest.approx(2.0, rel=0.05)


def test_independent_gradients_sit_above_the_formula():
    """Independent Gaussian per-sample gradients: the formula is a lower bound (the controlled 'random' geometry)."""
    g = np.random.default_rng(2).standard_normal((64, 12, 40))
    table = multiplier.multiplier_rows(g, (8,), (4, 8), 0.5, 1.0, 50, np.random.default_rng(3))
    assert (table["ratio_min"] > 1).all() and (table["ratio_se"] > 0).all()
    assert list(table["draws"]) == [50, 50]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [({"draws": 1}, "draws must be >= 2"), ({"batches": (100,)}, "batch size b = 100")],
)
def test_bad_inputs(kwargs, message):
    g = np.ones((10, 2, 4))
    args = {"batches": (2,), "ranks": (2,), "delta": 0.5, "c": 1.0, "draws": 5, "rng": np.random.default_rng(0)}
    with pytest.raises(ValueError, match=message):
        multiplier.multiplier_rows(g, **{**args, **kwargs})


def test_batch_multiplier_checks_shapes_and_matches_the_geometry_study():
    rng = np.random.default_rng(4)
    A = projection.sample_projection(rng, 4, 10)
    with pytest.raises(ValueError, match="m = A's 10 columns"):
        projection.batch_multiplier(np.ones((2, 3, 9)), A, 0.5, 1.0)
    # the controlled-geometry study is this primitive on its own batches (same draws, same numbers)
    study = projection.equivalent_multiplier("random", 8, 6, 10, 4, 0.5, 1.0, np.random.default_rng(5))
    rng = np.random.default_rng(5)
    A = projection.sample_projection(rng, 4, 10)
    g = projection.per_sample_gradients("random", 8, 6, 10, rng)
    assert projection.batch_multiplier(g, A, 0.5, 1.0) == study


def test_the_record_and_its_file_have_their_provenance(tmp_path, monkeypatch, tiny_scale):
    monkeypatch.setenv("LORAPRIV_CACHE_DIR", str(tmp_path / "cache"))
    engine = dataclasses.replace(
        tiny_scale.engine, model=ModelSpec(n_layer=1, n_embd=16, n_head=1, vocab_size=300, pretrain_epochs=1)
    )
    scale = dataclasses.replace(tiny_scale, engine=engine)
    record = multiplier.record(scale, texts=12, batches=(4,), ranks=(2,), draws=3)
    assert (record["n"], record["m"]) == (48, 16)
    assert record["table"]["b"] == [4] and record["table"]["draws"] == [3]
    assert set(record) >= {"base", "measured_on", "wall_seconds", "delta", "c"}
    monkeypatch.setattr(multiplier, "record", lambda s: {**record, "wall_seconds": 0.0})
    multiplier.main([str(tmp_path / "out.json")])
    assert json.loads((tmp_path / "out.json").read_text())["table"] == record["table"]
    with pytest.raises(SystemExit, match="usage"):
        multiplier.main([])
