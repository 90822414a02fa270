"""The DP game against LoRA-FA without noise: subsets of texts, the game's settings, the summary's
direction, and the game itself on a tiny model (released A: the worlds separate exactly)."""

import ddp_driver  # tests/ is on sys.path under pytest's default import mode
import numpy as np
import pytest

from lorapriv_utils.mia.engine import models
from lorapriv_utils.mia.engine.data import TextWindows
from lorapriv_utils.mia.engine.finetune import lora_layers
from lorapriv_utils.mia.experiments import whitebox
from lorapriv_utils.mia.experiments.workspace import Workspace


def test_subset_keeps_the_windows_of_the_chosen_texts_and_renumbers_them():
    ids = np.arange(12).reshape(6, 2)
    windows = TextWindows(ids, np.array([0, 0, 1, 2, 2, 3]), 4)
    part = whitebox.subset(windows, [0, 2, 3])
    assert part.n_texts == 3 and part.owner.tolist() == [0, 0, 1, 1, 2]
    assert part.ids[:, 0].tolist() == [0, 2, 6, 8, 10]
    for bad in ([0, 0], [4], [-1]):
        with pytest.raises(ValueError, match="distinct indices"):
            whitebox.subset(windows, bad)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"texts": 0}, "texts must be >= 1"),
        ({"targets": 1}, "targets must lie"),
        ({"targets": 200}, "targets must lie"),
        ({"steps": 0}, "steps must be >= 1"),
        ({"lr": 0.0}, "lr must be positive"),
        ({"texts": 2.5}, "integer"),
    ],
)
def test_game_settings_are_checked(kwargs, match):
    with pytest.raises(ValueError, match=match):
        whitebox.GameConfig(**kwargs)


def test_the_summary_calls_the_farther_world_in():
    rows = [
        {
            "known_in": 1.0 + i,
            "known_out": 0.0,
            "blind_in": 1.0,
            "blind_out": 1.0 + i,
            "fitted_in": 0.5,
            "fitted_out": 0.1,
        }
        for i in range(4)
    ]
    out = whitebox.summarize(rows, rank=2, ppl=10.0, seed=0, resamples=50)
    assert out["fitted"]["separated"] and out["fitted"]["auc"]["value"] == 1.0
    assert out["known"]["auc"]["value"] == 1.0 and out["known"]["separated"]
    assert out["blind"]["auc"]["value"] < 0.5 and not out["blind"]["separated"]


@pytest.mark.slow
def test_with_a_released_the_worlds_separate_exactly(tmp_path, monkeypatch, engine_cache):
    monkeypatch.setenv(models.CACHE_ENV_VAR, str(engine_cache))
    work = Workspace(ddp_driver.SCALE, tmp_path, progress=False, device="cpu")
    game = whitebox.GameConfig(texts=8, targets=3, steps=2, lr=1.0)
    row = whitebox.play(work, 2, game, rounds=1, relaxes=(whitebox.FIT_RELAX,))  # the fit is not under test here
    assert all(t["known_out"] == 0.0 and t["known_in"] > 0 for t in row["targets"])
    assert row["known"]["auc"]["value"] == 1.0 and row["known"]["separated"]
    assert all(t["blind_out"] > 0 for t in row["targets"])  # a wrong A' never reproduces the release
    with pytest.raises(ValueError, match="needs 1000 texts"):
        whitebox.play(work, 2, whitebox.GameConfig(texts=1000, targets=3))
    with pytest.raises(ValueError, match="needs a rank"):
        whitebox.play(work, 0, game)


@pytest.mark.slow
def test_the_replay_reproduces_the_engine_and_the_fit_finds_a_known_metric(tmp_path, monkeypatch, engine_cache):
    """Instruments of the fitted secret-A attack: the adversary's replay from a given A is the engine's own
    LoRA-FA run, and a release made with A = sqrt(m/r) times orthonormal rows (K = (m/r) I, the fit's start) is
    matched at once in the "out" world and not in the "in" world."""
    monkeypatch.setenv(models.CACHE_ENV_VAR, str(engine_cache))
    work = Workspace(ddp_driver.SCALE, tmp_path, progress=False, device="cpu")
    game = whitebox.GameConfig(texts=8, targets=3, steps=2, lr=1.0)
    base, members = work.base()[0], work.dataset("ptb", 0).members
    full, rest = whitebox.subset(members, list(range(8))), whitebox.subset(members, list(range(1, 8)))
    released = whitebox.release(base, full, 2, 0, game)
    starts = [layer.lora_A["default"].weight.detach().double().numpy() for layer in lora_layers(released["model"])]
    replay = whitebox.replay_from(base, full, 2, starts, game)
    assert all(
        np.array_equal(a, b) for a, b in zip(whitebox.paper_updates(released["model"]), replay["merged"], strict=True)
    )
    rng = np.random.default_rng(0)
    orthonormal = [np.linalg.qr(rng.standard_normal((a.shape[1], 2)))[0].T * np.sqrt(a.shape[1] / 2) for a in starts]
    world_out = whitebox.replay_from(base, rest, 2, orthonormal, game)["merged"]
    world_in = whitebox.replay_from(base, full, 2, orthonormal, game)["merged"]
    assert whitebox.fitted_distance(base, rest, 2, world_out, game, rounds=0)["distance"] < 1e-6
    assert whitebox.fitted_distance(base, rest, 2, world_in, game, rounds=0)["distance"] > 1e-3
    with pytest.raises(ValueError, match="starts must be"):
        whitebox.replay_from(base, full, 2, [a[:, :-1] for a in starts], game)
    with pytest.raises(ValueError, match="rounds must be"):
        whitebox.fitted_distance(base, rest, 2, world_out, game, rounds=-1)
    with pytest.raises(ValueError, match="relaxes must include"):
        whitebox.play(work, 2, game, relaxes=(1.0,))


def test_the_game_keeps_each_rank_and_writes_the_record_once_every_rank_has_run(tmp_path, monkeypatch, tiny_scale):
    """Two processes given different ranks share the game through the parts folder; a part played with other
    settings, or by other code, is played again, not reused."""
    import json

    from lorapriv_utils import store

    played = []

    def fake_play(work, rank, game, seed=0, rounds=whitebox.FIT_ROUNDS):
        played.append(rank)
        targets = [
            {f"{arm}_{w}": float(k + (w == "in")) for arm in whitebox.ARMS for w in ("in", "out")} for k in (0, 1)
        ]
        return whitebox.summarize(targets, rank, 1.0, seed)

    class Work:
        scale = tiny_scale

        def dataset(self, name, seed):
            return type("Prepared", (), {"split_hashes": {"members": "x"}})()

        def base(self):
            return None, None, {"spec": {}}

    monkeypatch.setattr(whitebox, "play", fake_play)
    first = whitebox.RANKS[:1]
    assert whitebox.game_record(Work(), ranks=first, parts=tmp_path) is None
    record = whitebox.game_record(Work(), ranks=whitebox.RANKS[1:], parts=tmp_path)
    assert [row["rank"] for row in record["rows"]] == list(whitebox.RANKS) and played == list(whitebox.RANKS)
    parts = [json.loads(p.read_text()) for p in sorted(tmp_path.glob("*.json"))]
    assert record["wall_seconds"] == pytest.approx(sum(p["wall_seconds"] for p in parts))
    assert record["fit"]["relaxes"] == list(whitebox.FIT_RELAXES) and len(parts) == len(whitebox.RANKS)
    whitebox.game_record(Work(), ranks=first, parts=tmp_path, rounds=2)  # other settings: played again
    assert played == [*whitebox.RANKS, whitebox.RANKS[0]]
    monkeypatch.setitem(store.NUMERICS, "whitebox", store.NUMERICS["whitebox"] + 1)  # other code: played again
    assert whitebox.game_record(Work(), ranks=first, parts=tmp_path) is None
    assert played == [*whitebox.RANKS, whitebox.RANKS[0], whitebox.RANKS[0]]
    # other attack metrics only: the kept ranks are reused and their summaries made again from their distances
    monkeypatch.setitem(store.NUMERICS, "attack-metrics", store.NUMERICS["attack-metrics"] + 1)
    again = whitebox.game_record(Work(), ranks=first, parts=tmp_path)
    assert again is None and played == [*whitebox.RANKS, whitebox.RANKS[0], whitebox.RANKS[0]]
    # without a parts folder a record is only ever the whole game; the command line refuses a part of it
    with pytest.raises(SystemExit):
        whitebox.main([str(tmp_path / "game.json"), "--ranks", str(whitebox.RANKS[0])])
