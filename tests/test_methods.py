"""The method registry: every method's entry is complete and drives the engine."""

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from lorapriv_utils import store
from lorapriv_utils.mia.engine import finetune, methods
from lorapriv_utils.mia.experiments import grid
from lorapriv_utils.mia.records import specs
from lorapriv_utils.scale import SCALES, EngineScale

REPO = Path(__file__).resolve().parents[1]


def test_every_entry_names_real_components_weights_trainers_and_settings():
    engine_fields = {f.name for f in dataclasses.fields(EngineScale)}
    for name, method in methods.REGISTRY.items():
        assert method.name == name and method.label
        assert set(method.components) <= set(store.NUMERICS), name
        assert method.weights in methods.WEIGHTS and method.trainer in methods.TRAINERS, name
        assert method.settings is None or method.settings in engine_fields, name
        if method.grid:
            assert method.trainer in finetune.TRAINERS, name
    assert grid.METHODS == tuple(n for n, m in methods.REGISTRY.items() if m.grid)
    assert "compressed" not in grid.METHODS  # a weight set of the DP comparison, trained by dp_compare
    assert {n for n, m in methods.REGISTRY.items() if m.per_text} == {"dpsgd", "rowscale", "compressed"}


def test_settings_enter_only_the_specs_of_the_methods_that_read_them():
    engine = SCALES["cpu-small"].engine
    assert set(specs.method_settings(engine, "dpsgd")) == {"dp"}
    assert set(specs.method_settings(engine, "rowscale")) == {"rowscale"}
    assert all(specs.method_settings(engine, m) == {} for m in ("full", "adapter", "lora", "lorafa", "flora"))
    assert specs.method_numerics("rowscale")["rowscale"] == store.NUMERICS["rowscale"]
    assert "dpsgd" not in specs.method_numerics("lora")


def test_every_table_orders_the_methods_as_the_grid_and_puts_others_after_them():
    assert [methods.position(n) for n in methods.GRID] == list(range(len(methods.GRID)))
    last = max(methods.position(n) for n in methods.GRID)
    assert methods.position("compressed") > last and methods.position("retired") > last  # never tied with one


def test_an_unknown_method_is_one_clear_error():
    with pytest.raises(ValueError, match="unknown method 'qlora'; choose one of full"):
        methods.get("qlora")


def test_the_measurement_producers_run_from_the_one_command_line(capsys):
    from lorapriv_utils.mia import cli

    with pytest.raises(SystemExit):
        cli.main(["multiplier", "--help"])  # a usage line, never a measurement written to "--help"
    assert "usage: python -m lorapriv_utils multiplier [-h] path" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        cli.main(["whitebox", "--help"])
    assert "usage: python -m lorapriv_utils whitebox" in capsys.readouterr().out
    assert set(cli.PRODUCERS) <= set(cli.build_parser().commands)


def test_every_record_is_named_by_the_one_cell_name():
    """Method, rank, noise, seed, in that order, for every kind of record (the committed files are named so)."""
    from pathlib import Path

    from lorapriv_utils.mia.attacks import lira
    from lorapriv_utils.mia.experiments import audit, frontier
    from lorapriv_utils.scale import DPConfig

    scale = SCALES["cpu-small"]
    cell = grid.Cell("ptb", "dpsgd", 8, 0)
    assert grid.cell_name("lora", 8.0, float("nan"), 2, "enron") == "enron/lora-r8-s2"
    assert grid.Variant("dpsgd", 8, 0.5).name == grid.cell_name("dpsgd", 8, 0.5) == "dpsgd-r8-z0.5"
    assert grid.result_path(Path("out"), scale, cell) == Path("out/cpu-small/ptb/dpsgd-r8-s0.json")
    audit_path = audit.audit_path(Path("out"), scale, cell, DPConfig(noise_multiplier=1.0))
    assert audit_path == Path("out/cpu-small/audit/ptb/dpsgd-r8-z1-s0.json")
    fixed = audit.audit_path(Path("out"), scale, grid.Cell("ptb", "full", None, 2), None, lr=3e-5)
    assert fixed == Path("out/cpu-small/audit/ptb/full-lr3e-05-s2.json")  # a fixed rate lies beside the swept one
    assert frontier.frontier_path(Path("o"), "s", "ptb", "full", 1) == Path("o/s/frontier/ptb/full-s1.json")
    assert lira.lira_path(Path("o"), "s", "ptb", "lora-r8", 0) == Path("o/s/lira/ptb/lora-r8-s0.json")
    assert grid.DPCell("full", 0.0).name == "ptb/full-z0-s0"


def test_a_method_that_trains_with_sgd_sweeps_the_scales_sgd_rates_and_cannot_be_switched_to_adamw():
    import torch

    from lorapriv_utils.mia.engine.training import TrainConfig

    engine = SCALES["cpu-pretrained"].engine
    assert methods.lr_grid(engine, "adaptersgd") == engine.sgd_lr_grid != engine.dense.lr_grid
    assert methods.lr_grid(engine, "adapter") == engine.dense.lr_grid  # the AdamW methods keep their grids
    rule = specs.lr_rule(engine, "adaptersgd")
    assert rule["grid"] == list(engine.sgd_lr_grid)
    assert specs.train_spec(engine, "adaptersgd")["optimizer"] == "sgd"
    assert specs.train_spec(engine, "adapter")["optimizer"] == "adamw"  # the AdamW methods' specs are unchanged
    config = finetune.default_train_config(engine, "adaptersgd", seed=0)
    assert config.optimizer == "sgd" and config.lr == engine.sgd_lr_grid[len(engine.sgd_lr_grid) // 2]
    bare = dataclasses.replace(engine, sgd_lr_grid=())
    with pytest.raises(ValueError, match="adaptersgd trains with SGD and this scale declares no SGD rates; pass"):
        specs.lr_rule(bare, "adaptersgd")
    assert specs.lr_rule(bare, "adaptersgd", grid=(0.5, 1.0))["grid"] == [0.5, 1.0]  # --lr-grid gives them
    with pytest.raises(ValueError, match="sgd_lr_grid must hold positive rates"):
        dataclasses.replace(engine, sgd_lr_grid=(0.0, 1.0))
    model = torch.nn.Linear(2, 2)
    with pytest.raises(ValueError, match="adaptersgd trains with sgd, not adamw: drop --optimizer"):
        finetune.fine_tune(model, "adaptersgd", np.zeros((2, 4), dtype=np.int64), TrainConfig(1, 0.1, 2))


def test_an_optimizer_override_that_contradicts_a_method_is_refused_before_any_training(capsys, monkeypatch, tmp_path):
    from lorapriv_utils.mia import cli
    from lorapriv_utils.mia.engine.training import OPTIMIZERS

    assert all(m.optimizer in OPTIMIZERS for m in methods.REGISTRY.values())
    with pytest.raises(SystemExit):
        cli.main(["run", "--methods", "adapter,adaptersgd", "--optimizer", "adamw", "--datasets", "ptb"])
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert "--optimizer adamw: adaptersgd trains with sgd by definition; drop --optimizer or that method" in last
    monkeypatch.chdir(REPO / "notebooks")  # inside the book: its own results folders are the book's
    assert cli._shared_out(REPO / "results" / "published") and not cli._shared_out(REPO / "results" / "other")
    monkeypatch.chdir(tmp_path)  # the folders the checks create lie here
    for out in ("results", "./results/published/", "results/pending"):
        assert cli._shared_out(Path(out)), out  # where adapter's own records lie
    for out in ("results/published/projection/sgd", "elsewhere/results", "results/published/other"):
        assert not cli._shared_out(Path(out)), out  # folders of their own
    args = cli.build_parser().parse_args(["run", "--methods", "adapter", "--optimizer", "sgd", "--datasets", "ptb"])
    args.out = Path("results/published")
    with pytest.raises(ValueError, match="give them an --out of their own"):
        cli.check_run_arguments(args)
    args.out = Path("results/published/projection/sgd")
    cli.check_run_arguments(args)  # a folder of its own, as the projection targets use
    args.optimizer, args.out = "adamw", Path("results/published")  # adapter's own optimiser: nothing changes
    cli.check_run_arguments(args)
    with pytest.raises(SystemExit):
        cli.main(["run", "--methods", "adapter", "--optimizer", "sgd", "--datasets", "ptb"])  # the default, results
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert "--optimizer sgd: adapter would train with sgd, not its own adamw, and its records would lie" in last
