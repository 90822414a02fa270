"""Chapter b1_vector_queries (paper B, Theorem 1) at a tiny scale: tables and verdicts."""

import dataclasses

import numpy as np
import pytest
from conftest import registered

from lorapriv_utils.chapters import b1_vector_queries as b1


def test_vector_queries_chapter(tiny_scale):
    scale = dataclasses.replace(tiny_scale, noise_draws=2000, element_draws=100_000)
    law = b1.law_table([(16, 4, 0.9)], scale)
    support = b1.support_table([(16, 4, 0.9)], scale)
    profile = b1.profile_table([(16, 4, 0.9)], [0.0, 1.0], scale)
    theorem = b1.theorem1_table([16], [16], [0.99, 0.999], scale)
    dpmap = b1.dp_map(64, [1, 16], [0.99, 0.999])
    gauss = b1.gaussian_crosscheck([0.5])
    assert bool(theorem["valid"].all()) and (theorem["looseness"] > 1).all()
    assert np.isinf(dpmap.loc[dpmap["r"] == 1, "eps_wishart"]).all()
    claims = b1.claims(law, support, profile, theorem, dpmap, gauss, scale)
    assert {c.claim_id for c in claims} <= registered(b1.KEY)
    verdicts = {c.claim_id: c.verdict for c in claims}
    assert verdicts == {"B-1.support": "holds", "B-1.theorem1": "holds", "B-1.no-noise": "qualified"}
    assert b1.key_numbers(theorem, b1.dp_map(768, [16], [0.999]))["b1_vector_queries_eps_r16_rho999"] > 1


@pytest.mark.slow
def test_alignment_of_real_gradients(tiny_scale):
    scale = dataclasses.replace(tiny_scale, attack_trials=200)
    curve = b1.alignment_table(scale, texts=160, batch_sizes=[2, 8, 64, 128])
    assert curve["one_minus_rho"].is_monotonic_decreasing
    pretrained, record = b1.load_pretrained_alignment()
    assert record["base"]["cache_key"] and (pretrained["B"] == 8).any()
    claim = b1.alignment_claim(curve, pretrained, scale)
    assert claim.claim_id in registered(b1.KEY)
    assert claim.verdict in ("holds", "qualified", "fails")
    assert b1.alignment_numbers(curve, pretrained)["b1_vector_queries_pre_noise_scale"] > 0
    with pytest.raises(ValueError, match="two batch sizes"):
        b1.alignment_claim(curve[curve["B"] < 64], pretrained, scale)


def test_missing_alignment_results_say_how_to_regenerate_them(tmp_path):
    with pytest.raises(FileNotFoundError, match="python -m lorapriv_utils.mia.experiments.alignment"):
        b1.load_pretrained_alignment(tmp_path / "absent.json")
