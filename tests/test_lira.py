"""Offline LiRA: its signal on losses whose answer is known, its reference halves, and its runs on a tiny model."""

import ddp_driver
import numpy as np
import pytest

from lorapriv_utils import store
from lorapriv_utils.mia import cli
from lorapriv_utils.mia.attacks import lira, metrics
from lorapriv_utils.mia.engine import models
from lorapriv_utils.scale import SCALES

SCALE = ddp_driver.SCALE


def test_the_signal_is_a_z_score_against_the_references():
    refs = np.array([[1.0, 2.0, 3.0], [3.0, 2.0, 5.0]])  # per text: means 2, 2, 4; variances 2, 0, 2
    target = np.array([2.0, 1.0, 2.0])
    own = lira.lira_signal(target, refs)
    assert own[0] == 0 and own[2] == pytest.approx(-2 / np.sqrt(2)) and own[1] < -1e5  # no spread: extreme
    assert lira.lira_signal(target, refs, spread=2.0).tolist() == [0.0, -0.5, -1.0]
    # one spread for members and non-members: sqrt of the mean variance over all four texts
    m, n = lira.lira_signals(target[:2], np.array([4.0]), refs[:, :2], np.array([[4.0], [6.0]]))
    spread = np.sqrt((2 + 0 + 2) / 3)
    assert m.tolist() == pytest.approx([0.0, -1 / spread]) and n.tolist() == pytest.approx([-1 / spread])
    with pytest.raises(ValueError, match="at least 2"):
        lira.lira_signal(target, refs[:1])
    with pytest.raises(ValueError, match="must be"):
        lira.lira_signal(target[:2], refs)


def test_lira_beats_a_single_reference_when_texts_differ_in_spread():
    # texts whose out-losses vary a lot make a single reference noisy; the z-score normalises them
    rng = np.random.default_rng(0)
    n, k = 2000, 8
    spread = rng.uniform(0.05, 1.0, n)
    mean = rng.normal(3, 0.5, n)
    member = rng.random(n) < 0.5
    refs = mean + spread * rng.standard_normal((k, n))
    target = mean + spread * rng.standard_normal(n) - member * 0.6 * spread
    single = metrics.roc_auc((target - refs[0])[member], (target - refs[0])[~member])
    z = lira.lira_signal(target, refs)  # each text its own spread
    assert metrics.roc_auc(z[member], z[~member]) > single + 0.05


def test_halves_are_seeded_distinct_halves():
    parts = lira.halves(101, 4, 0)
    assert all(p.size == 50 and np.all(np.diff(p) > 0) for p in parts)
    assert len({tuple(p) for p in parts}) == 4
    assert all(np.array_equal(a, b) for a, b in zip(parts, lira.halves(101, 4, 0), strict=True))
    with pytest.raises(ValueError, match="--references"):
        lira.halves(10, 1, 0)


@pytest.mark.slow
def test_references_of_a_finished_cell(tmp_path, monkeypatch, capsys, engine_cache):
    monkeypatch.setitem(SCALES, "cpu-small", SCALE)
    monkeypatch.setenv(models.CACHE_ENV_VAR, str(engine_cache))
    out = tmp_path / "out"
    argv = ["--datasets", "synthetic-email", "--methods", "lora", "--ranks", "2", "--out", str(out)]
    argv += ["--no-progress", "--threads", "1"]
    with pytest.raises(SystemExit):
        cli.main(["lira", *argv])  # no grid yet: the error says to run it
    assert "run the grid first" in capsys.readouterr().err
    assert cli.main(["run", *argv]) == 0
    assert cli.main(["lira", *argv, "--references", "2"]) == 0
    path = lira.lira_path(out, SCALE.name, "synthetic-email", "lora-r2", 0)
    record = store.read_record(path)
    scores = store.read_scores(store.scores_path(path))
    assert scores["members"].shape == (2, SCALE.engine.max_texts_per_part)
    assert not np.array_equal(scores["members"][0], scores["members"][1])  # different halves, different models
    assert store.scores_digest(scores) == record["scores_sha256"]
    capsys.readouterr()
    assert cli.main(["table", str(out)]) == 0  # LiRA's records are not cells: skipped without a word
    assert "skipping" not in capsys.readouterr().err
