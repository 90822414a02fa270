"""Alignment of neighbouring batch gradients (mia.alignment)."""

import math

import ddp_driver
import numpy as np
import pytest

from lorapriv_utils.mia.experiments import alignment
from lorapriv_utils.theory.montecarlo import rng_for


def test_synthetic_gradients_follow_the_noise_scale_model():
    # per-text gradients = mean + isotropic noise with a known noise scale nu
    rng = rng_for(1)
    d, n, nu = 4000, 600, 20.0
    m = np.zeros(d)
    m[0] = 1.0
    grads = m + rng.standard_normal((n, d)) * math.sqrt(nu / d)
    assert alignment.noise_scale(grads) == pytest.approx(nu, rel=0.1)
    curve = alignment.alignment_curve(grads, [4, 64, 256], 300, rng_for(2))
    np.testing.assert_allclose(curve["one_minus_rho"], curve["noise_scale_model"], rtol=0.25)
    slopes = alignment.local_exponents(curve)
    assert slopes[0] < slopes[1] < 2.05  # from about 1/B towards 1/B^2


@pytest.mark.slow
def test_real_gradients_have_one_row_per_text_and_shrink_the_gap_with_batch_size():
    grads = alignment.per_text_gradients(alignment.ptb_texts(24))
    assert grads.shape == (24, 64 * 192) and np.isfinite(grads).all()
    curve = alignment.alignment_curve(grads, [2, 12], 100, rng_for(3))
    assert curve["one_minus_rho"].iloc[0] > curve["one_minus_rho"].iloc[1]


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: alignment.alignment_curve(np.ones((5, 3)), [8], 10, rng_for(0)), "batch sizes"),
        (lambda: alignment.per_text_gradients(["a b"], layer=5), "layer"),
        (lambda: alignment.ptb_texts(10**7), "lines"),
    ],
)
def test_bad_inputs(call, message):
    with pytest.raises(ValueError, match=message):
        call()


@pytest.mark.slow
def test_the_record_at_the_start_of_fine_tuning_has_its_provenance(tmp_path, monkeypatch, tiny_scale, engine_cache):
    monkeypatch.setattr(alignment, "PRETRAINED_BATCHES", (2, 4))
    monkeypatch.setenv("LORAPRIV_CACHE_DIR", str(engine_cache))  # the session's tiny base, pre-trained once
    import dataclasses

    engine = dataclasses.replace(tiny_scale.engine, model=ddp_driver.TINY)
    record = alignment.pretrained_record(dataclasses.replace(tiny_scale, engine=engine), texts=8, draws=20)
    assert set(record) >= {"curve", "noise_scale", "base", "measured_on", "wall_seconds"}
    assert record["curve"]["B"] == [2, 4] and record["dim"] == 16 * 48
