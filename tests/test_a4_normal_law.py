"""Chapter a4_normal_law (paper A, section 4) at a tiny scale: tables and verdicts."""

import pytest
from conftest import registered

from lorapriv_utils.chapters import a4_normal_law


@pytest.mark.slow
def test_section4_claims(small):
    table = a4_normal_law.distance_table(list(small.m_grid), list(small.r_grid))
    assert {"tv", "kolmogorov", "bound_eq46", "implied_c_d"} <= set(table.columns)
    limits = a4_normal_law.limit_table([1, 4, 16])
    assert limits["tv_limit"].is_monotonic_decreasing
    fits = a4_normal_law.rate_fits(table)
    assert set(fits["in"]) == {"m", "r"}
    mc = a4_normal_law.monte_carlo_crosscheck([(64, 2)], small)
    assert (mc["z"].abs() < 4.5).all()
    dep = a4_normal_law.summand_dependence(small)
    general = a4_normal_law.general_rows_table([16, 4096], [1, 4])
    count = a4_normal_law.summand_count_table([(8, 2), (16, 3)], small)
    assert count["sum_equals_u_i"].all() and (count["summands"] == [15, 46]).all()
    eq47 = a4_normal_law.eq47_table(small, ms=(16, 64))
    assert (eq47["worst_over_uniform"] <= eq47["claimed_factor"]).all() and (eq47["worst_over_uniform"] > 1).all()
    claims = a4_normal_law.claims(table, limits, fits, mc, dep, general, small, count=count, eq47=eq47)
    assert {c.claim_id for c in claims} <= registered(a4_normal_law.KEY)
    verdicts = {c.claim_id: c.verdict for c in claims}
    numbers = a4_normal_law.key_numbers(table, limits, fits)
    assert numbers["a4_normal_law_tv_r_min"] > numbers["a4_normal_law_bound_r_min"]  # Lemma 4.2's bound broken
    assert numbers["a4_normal_law_m_max"] == 4096
    assert verdicts == {
        "A-4.2": "fails",
        "A-4.2-rank": "holds",
        "A-4.3": "fails",
        "A-B.eq43-independence": "fails",
        "A-4.2-general-q": "fails",
        "A-B.eq46-CD": "fails",
        "A-B.eq41": "holds",
        "A-B.count": "holds",
        "A-B.eq47": "holds",
    }
