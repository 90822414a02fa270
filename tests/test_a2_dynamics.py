"""Chapter a2_dynamics (paper A, section 2) at a tiny scale: tables and verdicts."""

import pytest
from conftest import registered

from lorapriv_utils.chapters import a2_dynamics


def test_section2_claims(small):
    drift = a2_dynamics.drift_table(small, problems=("least_squares",))
    assert bool(drift["eq6_exact"][drift["eta_L"] < 1].all())
    eq10 = a2_dynamics.eq10_table(small)
    assert bool(eq10["eq10_exact"].all())
    adversarial = a2_dynamics.adversarial_table(small, angles=(0.5,), lrs=(0.1,))
    rules = a2_dynamics.rules_table(small, ranks=(2,))
    assert set(rules.columns) >= {"full", "lora", "lora_frozen_a", "flora"}
    claims = a2_dynamics.claims(drift, eq10, adversarial, small)
    assert {c.claim_id for c in claims} <= registered(a2_dynamics.KEY)
    verdicts = {c.claim_id: c.verdict for c in claims}
    numbers = a2_dynamics.key_numbers(drift, adversarial)
    assert all(name.startswith("a2_dynamics_") for name in numbers)
    assert numbers["a2_dynamics_fa_worst"] > numbers["a2_dynamics_fa_worst_bound"]  # the counter-example
    assert verdicts == {
        "A-2.eq10": "holds",
        "A-2.1-frobenius": "fails",
        "A-2.1-bound": "fails",
        "A-2.eq9": "qualified",
    }


def test_drift_thresholds_interpolate_in_log_log():
    import pandas as pd

    drift = pd.DataFrame({"problem": ["p"] * 3, "eta_L": [0.1, 1.0, 10.0], "drift": [0.001, 0.1, 10.0]})
    row = a2_dynamics.drift_thresholds(drift).iloc[0]
    assert row["eta_L_at_0.01"] == pytest.approx(10**-0.5, rel=1e-4)
    assert row["eta_L_at_0.1"] == pytest.approx(1.0)
