"""A LoRA step with A frozen on the engine's PEFT GPT-2 (mia.lora_step)."""

import numpy as np
import pytest

from lorapriv_utils.mia.engine import lora_step


def test_plain_sgd_steps_move_the_merged_weights_by_a_multiple_of_m_g():
    assert max(lora_step.step_residuals(2, steps=2, optimizer="sgd")) < 1e-5


def test_adamw_steps_are_not_of_that_form():
    assert min(lora_step.step_residuals(2, steps=2, optimizer="adamw", lr=1e-3)) > 0.1


def test_the_multiple_is_minus_lr_times_the_squared_scaling():
    fitted, derived = lora_step.sgd_scale(4, lr=0.1, scaling=3.0)
    assert derived == pytest.approx(-0.9)  # -lr s^2, not -lr s or -lr
    assert fitted == pytest.approx(derived, rel=1e-5)


def test_engine_draws_gaussian_a_and_peft_default_does_not():
    engine = lora_step.normality(lora_step.a_entries(8, "engine"))
    peft = lora_step.normality(lora_step.a_entries(8, "peft"))
    assert engine["ks_p_value"] > 1e-3 and abs(engine["variance"] - 1) < 0.15
    assert peft["ks_p_value_shape"] < 0.05 and peft["excess_kurtosis"] == pytest.approx(-1.2, abs=0.2)  # uniform
    assert np.isclose(peft["variance"], 8 / (3 * 64), rtol=0.2)  # r Var(A) = r / (3 m), m = 64


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: lora_step.step_residuals(2, optimizer="adam"), "optimizer"),
        (lambda: lora_step.a_entries(2, "xavier"), "init"),
        (lambda: lora_step.step_residuals(0), "rank"),
    ],
)
def test_bad_inputs(call, message):
    with pytest.raises(ValueError, match=message):
        call()
