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
    with pytest.raises(FileNotFoundError, match="regenerate it with: make results-b1 "):
        b1.load_pretrained_alignment(tmp_path / "absent.json")


def test_fig2_theorem1_as_printed_is_no_bound_where_its_first_term_turns_negative(tiny_scale):
    """Paper B's Fig. 2 setting at the d that fits its exact curves (375): at r = 400, rho = 0.5, Theorem 1 as the
    blog post prints it gives an eps_rho below the exact eps at delta_rho = 0.01, because rho + K < 1 makes its
    first term negative; at r = 50 it is a (loose) bound.  Pinned, with the points read off the figure."""
    table = b1.figure2_table(375, ranks=(50, 400), rhos=(0.5,))
    low, high = table.iloc[0], table.iloc[1]
    assert low["upper_bound"] and low["eps_theorem"] > 2 * low["eps_exact"]
    assert not high["upper_bound"] and high["rho_plus_K"] < 1 and high["first_term"] < 0
    assert high["eps_theorem"] == pytest.approx(530.0, rel=1e-3) and high["eps_exact"] == pytest.approx(602.0, rel=1e-3)
    assert high["exact_delta_at_eps_theorem"] == pytest.approx(0.0506, rel=1e-2)  # against delta_rho = 0.01
    # with the negative first term clipped at 0 (the reading Fig. 2's Theorem 1 points fit) it is a bound again
    assert high["eps_clipped"] == pytest.approx(high["second_term"]) and high["clipped_upper_bound"]
    # our exact eps at r = 50 and 400 is within the reading tolerance of the figure's exact curve
    read = b1.PAPER_FIG2.set_index(["curve", "rho", "r"])["eps_read"]
    for r in (50, 400):
        ours = table.set_index("r").loc[r, "eps_exact"]
        assert ours == pytest.approx(read[("exact", 0.5, r)], rel=b1.FIG2_READ_TOLERANCE)


def test_fig2_claim_separates_reproduction_from_the_theorem_curve(tiny_scale, monkeypatch):
    """The claim's core checks are the exact curve's points and shape; a table where the formula is a bound
    everywhere holds B-1.theorem1's Fig. 2 checks, one where it is not fails them."""
    import pandas as pd

    rows = []
    for rho, exact in ((0.5, (560.0, 415.0, 605.0)), (0.9, (25.0, 50.0, 70.0))):
        for r, e in zip((50, 125, 400), exact, strict=True):
            rows.append(
                {"d": 375, "r": r, "rho": rho, "eps_exact": e, "eps_theorem": 2 * e, "first_term": 1.0}
                | {"second_term": 2 * e - 1, "rho_plus_K": 1.1, "delta_prime": 0.0033}
                | {"exact_delta_at_eps_theorem": 1e-4, "upper_bound": True}
                | {"eps_clipped": 2 * e, "exact_delta_at_eps_clipped": 1e-4, "clipped_upper_bound": True}
            )
    table = pd.DataFrame(rows)
    monkeypatch.setattr(b1, "PAPER_FIG2", b1.PAPER_FIG2[b1.PAPER_FIG2["r"].isin([50, 125, 400])])
    comparison = b1.figure2_comparison(table)
    inferred = pd.DataFrame({"d": [375], "max_log_error": [0.04]})
    claim = b1.figure2_claim(inferred, table, comparison, tiny_scale)
    core = [c for c in claim.checks if c.role == "core"]
    assert claim.claim_id in registered(b1.KEY) and all(c.passed for c in core) and len(core) == 5 + 2 + 6
    assert claim.verdict == "qualified"  # the printed formula (twice the exact) misses the figure's Theorem 1 points
    ok = [c for c in b1.figure2_theorem_checks(table) if "Fig. 2" in c.name]
    assert ok and all(c.passed for c in ok)
    broken = table.assign(exact_delta_at_eps_theorem=0.05, upper_bound=False)
    assert not any(c.passed for c in b1.figure2_theorem_checks(broken))
