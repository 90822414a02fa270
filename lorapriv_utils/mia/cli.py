"""The membership-inference command line.

``python -m lorapriv_utils run --scale cpu-small --methods all`` runs a grid (resumable);
``python -m lorapriv_utils table RESULTS_DIR [--csv]`` prints the summary table of its results;
``python -m lorapriv_utils audit --methods lora,rowscale,dpsgd --ranks 8`` audits methods with canaries;
``python -m lorapriv_utils frontier`` runs the privacy-utility frontier (resumable);
``python -m lorapriv_utils lira`` trains offline LiRA's reference models for finished cells;
``python -m lorapriv_utils status`` says whether each committed result is current.
Arguments are checked before torch is imported, so a mistake is reported in well under a second,
with the option it concerns.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from pathlib import Path

from .. import declared
from ..files import check_writable
from ..scale import SCALES, get_scale
from .attacks.canary import CanaryConfig
from .engine import data
from .engine.methods import REGISTRY, optimizer_refused
from .experiments import grid
from .experiments.grid import cell_name
from .experiments.producers import PRODUCERS, parse, refuse_unknown
from .records import report


def _rates(text: str) -> tuple[float, ...]:
    """``--lr-grid``'s comma list of finite rates > 0, sorted."""
    try:
        rates = tuple(sorted({float(part) for part in text.split(",") if part.strip()}))
    except ValueError:
        raise argparse.ArgumentTypeError(f"write comma-separated numbers such as 0.1,0.3,1, got {text!r}") from None
    if not rates or not all(0 < rate < math.inf for rate in rates):
        raise argparse.ArgumentTypeError(f"every rate must be a finite number > 0, got {text!r}")
    return rates


def _grid_arguments(run: argparse.ArgumentParser) -> None:
    run.add_argument(
        "--scale",
        default=(os.environ.get("LORAPRIV_SCALE") or "cpu-small").strip(),
        type=str.strip,
        choices=list(SCALES),
        help="the scale record of lorapriv_utils/scale.py (default: $LORAPRIV_SCALE, else cpu-small)",
    )
    run.add_argument(
        "--datasets",
        default=None,
        help=f"comma list or 'all' ({', '.join(data.DATASETS)}); default: the scale's own list",
    )
    run.add_argument(
        "--methods",
        default=",".join(grid.DEFAULT_METHODS),
        help=f"comma list or 'all' ({', '.join(grid.METHODS)}); default: {','.join(grid.DEFAULT_METHODS)}",
    )
    run.add_argument(
        "--ranks",
        default=None,
        help=f"ranks of {', '.join(grid.RANKED)} (default {','.join(map(str, grid.DEFAULT_RANKS))})",
    )
    run.add_argument("--seeds", default="0", help="comma list of seeds, each a split and a training (default 0)")
    run.add_argument("--out", type=Path, default=Path("results"), help="results folder (default: results)")
    run.add_argument("--data-dir", default=os.environ.get(data.DATA_ENV_VAR), help="folder with enron/ and pubmed/")
    run.add_argument("--hub", action="store_true", help="load corpora from the Hugging Face hub (needs internet)")
    run.add_argument("--shard", default="0/1", help="i/n: run every n-th cell starting at i")
    run.add_argument(
        "--device",
        default="auto",
        choices=["auto", "cpu", "cuda", "mps"],
        help="where to train (default auto: CUDA, then Apple MPS, then the CPU)",
    )
    run.add_argument(
        "--reference",
        default="same",
        choices=list(grid.REFERENCES),
        help="eq. 24's reference model: the target's own method and hyperparameters on the auxiliary part "
        "(same, calibrated; default) or full fine-tuning there (full)",
    )
    run.add_argument(
        "--optimizer",
        choices=["adamw", "sgd"],
        help="override the optimiser of every method that trains with AdamW (default: each method's own, AdamW but "
        "for adaptersgd); a method it changes needs an --out of its own, not results, results/published or "
        "results/pending (here or in the book), where that method's own records lie",
    )
    run.add_argument("--lr", type=float, help="fix every method's learning rate (default: each method's sweep)")
    run.add_argument(
        "--lr-grid",
        type=_rates,
        help="comma list of learning rates every method's sweep tries (default: the scale's grid of its family)",
    )
    run.add_argument("--epochs", type=int, help="override every method's number of epochs")
    run.add_argument(
        "--threads",
        type=int,
        default=None,
        help="CPU threads for torch (default: all cores); give each of several shards on one machine its share",
    )
    run.add_argument(
        "--accelerate",
        action="store_true",
        help="data-parallel training through accelerate (launch with `accelerate launch -m "
        "lorapriv_utils run ... --accelerate` for several GPUs)",
    )
    run.add_argument("--no-progress", action="store_true", help="no progress bars")


def _data_dir_argument(parser: argparse.ArgumentParser, what: str) -> None:
    parser.add_argument(
        "--data-dir", default=os.environ.get(data.DATA_ENV_VAR), help=f"folder with enron/ and pubmed/, {what}"
    )


def _own_arguments(run: argparse.ArgumentParser) -> None:
    """A user's own model, LoRA recipe and corpus (``engine.recipe``): the same attacks, intervals and records."""
    own = run.add_argument_group("your own model, LoRA recipe and texts")
    own.add_argument(
        "--model",
        default=None,
        help="a folder of a causal LM (safetensors, config.json, tokenizer) or a hub id with --revision, in place "
        "of the scale's base model; the scale still sets epochs, rates and caps",
    )
    own.add_argument("--revision", default=None, help="the commit of a hub --model (required for a hub id)")
    own.add_argument(
        "--peft-config",
        type=Path,
        default=None,
        help="a PEFT LoRA config (adapter_config.json): method lora trains this recipe (its r is the rank; "
        "the methods default to lora)",
    )
    own.add_argument("--data", type=Path, default=None, help="a JSONL or CSV file of texts (field 'text') to audit")


def own_scale(args: argparse.Namespace, scale):
    """``scale`` with the user's own model and LoRA recipe (``--model``, ``--peft-config``), named after them, each
    with a digest of what it is, so that the records of two models, recipes or corpora never share a folder; the
    datasets (``--data``), methods and ranks they imply are set on ``args``."""
    from dataclasses import replace

    from .engine import recipe

    model, parts = None, []
    if args.revision is not None and args.model is None:
        raise ValueError("--revision: it pins a hub --model; give --model too")
    if args.model is not None:
        local = Path(args.model).expanduser().exists() or args.revision is None and "/" not in args.model
        if local and args.revision is not None:
            raise ValueError(f"--revision: --model {args.model} is a local folder, which has no revision; drop it")
        if local:
            model = recipe.model_folder_spec(args.model, scale.engine.model.block_size)
            parts.append(f"{Path(model.folder).name}-{model.folder_sha256[:8]}")
        else:
            if args.revision is None:
                raise ValueError(
                    f"--model {args.model}: a hub model needs --revision COMMIT, so that a record names its weights"
                )
            model = hub_model_spec(args.model, args.revision, scale.engine.model.block_size)
            parts.append(f"{Path(args.model).name}-{args.revision[:8]}")
    lora = None if args.peft_config is None else recipe.read_peft_config(args.peft_config)
    if lora is not None:
        if args.methods == ",".join(grid.DEFAULT_METHODS):  # not given: the recipe's own method
            args.methods = "lora"
        methods = grid.parse_list("--methods", args.methods, grid.METHODS)
        others = [m for m in methods if m in grid.RANKED and m != "lora"]
        if others or "lora" not in methods:
            raise ValueError(
                f"--peft-config: a LoRA recipe trains method lora, and {', '.join(others) or 'no lora'} would not "
                "follow it; give --methods lora (and full or adapter beside it, if you like)"
            )
        if args.ranks is not None and grid.parse_ints("--ranks", args.ranks, 1) != [lora["r"]]:
            raise ValueError(f"--ranks {args.ranks}: the --peft-config sets r = {lora['r']}; drop --ranks")
        args.ranks = str(lora["r"])
        parts.append(f"{Path(args.peft_config).stem}-{recipe.recipe_digest(lora)}")
    if args.data is not None:
        if args.datasets is not None:
            raise ValueError("--data names the corpus: drop --datasets")
        args.datasets = f"{recipe.data_file_name(args.data)}-{recipe.file_digest(args.data)}"
        args.data_dir = str(args.data.expanduser().resolve())
    if not parts:
        return scale
    return replace(scale, name="+".join([scale.name, *parts]), engine=recipe.own_engine(scale.engine, model, lora))


def hub_model_spec(hub_id: str, revision: str, context: int):
    """The spec of a hub model at ``revision``: its config fetched (needs the hub) and checked as a folder's is."""
    import json
    import tempfile
    from dataclasses import replace

    from huggingface_hub import hf_hub_download

    from .engine import recipe

    data.check_hub_reachable(needed_for=f"--model {hub_id}")
    with tempfile.TemporaryDirectory() as scratch:
        try:
            path = hf_hub_download(hub_id, "config.json", revision=revision, cache_dir=scratch)
            config = json.loads(Path(path).read_text(encoding="utf-8"))
        except Exception as err:  # the hub's errors come in many types (not found, gated, no such revision)
            raise ValueError(
                f"--model {hub_id} --revision {revision}: its config.json could not be read from the hub "
                f"({type(err).__name__}); check the id, the revision and your access"
            ) from None
    return replace(recipe.config_spec(config, context, f"--model {hub_id}"), hub_id=hub_id, hub_revision=revision)


def _launcher_arguments(run: argparse.ArgumentParser) -> None:
    run.add_argument(
        "--launcher",
        default="local",
        choices=["local", "slurm", "submitit-local"],
        help="how the cells run: local (this process, or --workers one-thread processes; default), slurm (a "
        "Slurm job array through submitit, one one-core job a cell) or submitit-local (the same jobs as local "
        "processes)",
    )
    run.add_argument("--workers", type=int, default=1, help="local: one-thread processes at once (default 1)")
    run.add_argument("--partition", default=None, help="slurm: the partition (default: the cluster's)")
    run.add_argument("--time-min", type=int, default=None, help="slurm: each job's time limit in minutes (240)")
    run.add_argument("--mem-gb", type=int, default=None, help="slurm: each job's memory in GB (16)")
    run.add_argument("--max-running", type=int, default=None, help="slurm: jobs of the array at once (32)")
    run.add_argument("--gpus", type=int, default=None, help="slurm: GPUs per job (0; give 1 with --device cuda)")


SLURM_OPTIONS = ("partition", "time_min", "mem_gb", "max_running", "gpus")


def check_launcher(args: argparse.Namespace) -> None:
    """The launcher's options (no torch): one line naming the option a launcher does not take."""
    import shutil

    if args.workers < 1:
        raise ValueError(f"--workers: must be >= 1, got {args.workers}")
    if args.workers > 1 and args.launcher != "local":
        raise ValueError(f"--workers: only the local launcher takes it; {args.launcher} runs one job a cell")
    given = [name for name in SLURM_OPTIONS if getattr(args, name) is not None]
    if given and args.launcher == "local":
        raise ValueError(f"--{given[0].replace('_', '-')}: only --launcher slurm or submitit-local takes it")
    if args.gpus is not None and args.gpus < 0:
        raise ValueError(f"--gpus: must be >= 0, got {args.gpus}")
    for name in ("time_min", "mem_gb", "max_running"):
        if getattr(args, name) is not None and getattr(args, name) < 1:
            raise ValueError(f"--{name.replace('_', '-')}: must be >= 1, got {getattr(args, name)}")
    if args.accelerate and (args.launcher != "local" or args.workers > 1):
        raise ValueError("--accelerate: data-parallel training runs in this process; drop --launcher/--workers")
    if args.launcher == "slurm" and shutil.which("sbatch") is None:
        raise ValueError(
            "--launcher slurm: no sbatch here; run on a Slurm login node, or try the jobs with "
            "--launcher submitit-local"
        )


def run_overrides(args: argparse.Namespace):
    """The run's ``workspace.Overrides`` of every method's defaults (torch comes in with the workspace)."""
    from .experiments.workspace import Overrides

    return Overrides(epochs=args.epochs, lr=args.lr, optimizer=args.optimizer, lr_grid=args.lr_grid)


def launched(args: argparse.Namespace, scale, cells) -> list[dict]:
    """Run ``cells`` as jobs (:mod:`.experiments.jobs`) and read their records back."""
    from ..store import read_record
    from .experiments import jobs

    job = jobs.CellJob(
        scale,
        str(args.out),
        run_overrides(args),
        data_dir=args.data_dir,
        reference=args.reference,
        device=args.device,
        threads=args.threads or 1,
        hub=args.hub,
    )
    defaults = jobs.Slurm()
    slurm = jobs.Slurm(
        **{n: getattr(args, n) if getattr(args, n) is not None else getattr(defaults, n) for n in SLURM_OPTIONS}
    )
    paths = jobs.launch(job, cells, args.launcher, workers=args.workers, slurm=slurm)
    return [read_record(path, "cell") for path in paths]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m lorapriv_utils", description=__doc__.split("\n\n")[0], allow_abbrev=False
    )
    sub = parser.add_subparsers(dest="command", required=True)
    parser.commands = sub.choices  # each command's own parser: its errors show its own usage
    run = sub.add_parser("run", allow_abbrev=False, help="run a membership-inference grid (resumable)")
    _grid_arguments(run)
    _launcher_arguments(run)
    _own_arguments(run)
    audit = sub.add_parser(
        "audit", allow_abbrev=False, help="audit methods with canaries in one training run (epsilon lower bounds)"
    )
    _grid_arguments(audit)
    audit.add_argument(
        "--canaries",
        type=int,
        default=CanaryConfig.canaries,
        help="canaries (held-out texts of the corpus), each in w.p. 1/2 (default %(default)s)",
    )
    audit.add_argument(
        "--guesses",
        type=int,
        default=CanaryConfig.guesses_each_side,
        help="guesses on each side, in and out (default %(default)s)",
    )
    audit.add_argument("--noise-multiplier", type=float, default=None, help="DP-SGD's sigma for dpsgd cells")
    frontier = sub.add_parser(
        "frontier",
        allow_abbrev=False,
        help="the privacy-utility frontier: every method at every rate, scored after several epochs",
    )
    _grid_arguments(frontier)
    for action in frontier._actions:  # the frontier's own defaults, and no --epochs (its checkpoints set them)
        if action.dest == "ranks":
            action.help = f"ranks of LoRA's curves (default {','.join(map(str, grid.FRONTIER_RANKS))})"
        if action.dest == "epochs":
            action.help = argparse.SUPPRESS
    frontier.add_argument(
        "--noise",
        default=None,
        help=f"DP-SGD's noise multipliers (default {','.join(f'{z:g}' for z in grid.FRONTIER_NOISE)}; only with dpsgd)",
    )
    frontier.add_argument(
        "--checkpoints",
        default=",".join(map(str, grid.FRONTIER_CHECKPOINTS)),
        help="epochs after which each run is scored; it trains for the largest (default %(default)s)",
    )
    frontier.add_argument(
        "--dp-rank",
        type=int,
        default=None,
        help=f"rank of FLoRA and DP-SGD (default {grid.FRONTIER_DP_RANK}; only with flora or dpsgd)",
    )
    frontier.add_argument(
        "--bases-only",
        action="store_true",
        help="score only the base model on each dataset's split (the frontier's epoch 0), training nothing",
    )
    lira = sub.add_parser(
        "lira",
        allow_abbrev=False,
        help="offline LiRA's reference models for finished grid cells (multi-reference attack)",
    )
    _grid_arguments(lira)
    lira.add_argument(
        "--references", type=int, default=4, help="reference models, each on half the auxiliary part (default 4)"
    )
    table = sub.add_parser("table", allow_abbrev=False, help="print the summary table of a results folder")
    table.add_argument("results", type=Path, help="a results folder (the --out of run) or one scale's subfolder")
    table.add_argument("--csv", action="store_true", help="print CSV, one column per number, one row per cell")
    table.add_argument("--cells", action="store_true", help="one row per cell with every attack (wide)")
    table.add_argument(
        "--published",
        action="store_true",
        help="include the book's records under a published/ folder (shown only when asked, or when RESULTS is one)",
    )
    status = sub.add_parser(
        "status",
        allow_abbrev=False,
        help="say whether each committed result is current, stale (and what changed), damaged or missing",
    )
    status.add_argument(
        "results", type=Path, nargs="?", default=None, help="the published folder (default: results/published)"
    )
    _data_dir_argument(status, "to check the data part of the records made on them")
    status.add_argument("--verbose", action="store_true", help="one line per record, current ones included")
    status.add_argument(
        "--table", action="store_true", help="print the README's table of committed results and their wall times"
    )
    status.add_argument(
        "--update-readme", action="store_true", help="rewrite that table in README.md from the committed records"
    )
    status.add_argument(
        "--refresh",
        action="store_true",
        help="recompute from their stored scores the metrics of the records whose metrics' settings alone changed "
        "(no training; Enron and PubMed records need --data-dir)",
    )
    verify = sub.add_parser(
        "verify",
        allow_abbrev=False,
        help="train one committed grid cell again, at the rate it chose, and compare every number with its record",
    )
    verify.add_argument("record", type=Path, help="the JSON file of a committed grid cell (results/published/...)")
    _data_dir_argument(verify, "for a record made on them")
    status.add_argument(
        "--declare",
        nargs="+",
        metavar="PATH",
        help="declare these records (paths or globs under the published folder) as what the chapters read, each "
        "with its own options and content: the one way to change results/published/declared.json",
    )
    for name, (_, what) in PRODUCERS.items():  # their own parsers read the arguments (``--help`` after the name)
        sub.add_parser(
            name, allow_abbrev=False, help=what + f" (python -m lorapriv_utils {name} --help)", add_help=False
        )
    return parser


SHARED_OUTS = ("results", "results/published", "results/pending")  # where each method's own records lie


def _shared_out(out: Path) -> bool:
    """Whether ``out`` is one of SHARED_OUTS, of the working directory (the default --out is relative to it) or of
    the book the chapters read, rather than a folder of its own like results/published/projection/sgd."""
    from ..ledger import ledger_dir

    roots = {Path.cwd()}
    try:
        roots.add(ledger_dir().parent)
    except FileNotFoundError:  # run outside any checkout: only the working directory's folders
        pass
    return os.path.abspath(out) in {os.path.abspath(root / folder) for root in roots for folder in SHARED_OUTS}


def _overrides(args: argparse.Namespace) -> dict:
    return declared.run_options(
        epochs=getattr(args, "epochs", None),
        lr=args.lr,
        lr_grid=getattr(args, "lr_grid", None),
        optimizer=getattr(args, "optimizer", None),
        reference=getattr(args, "reference", None),
    )


def check_declared(args: argparse.Namespace, scale, cells, variants=None, checkpoints=None) -> None:
    """Where ``--out`` is a declared store (``results/published``: what the chapters read), every record this command
    would write must be declared there with the options this command gives (``lorapriv_utils.declared``); checked
    before any training, in one line that names the record and the option."""
    out = Path(args.out)
    root = declared.store_root(out / "_")
    if root is None:
        return
    declaration = declared.load(root)
    given = _overrides(args)
    command = args.command
    targets: list[tuple[Path, dict, tuple[str, ...]]] = []
    if command == "frontier":
        from .records.specs import lr_rule

        given = declared.run_options(optimizer=given.get("optimizer"), checkpoints=list(checkpoints or ()))
        for dataset in dict.fromkeys(c.dataset for c in cells):
            for seed in sorted({c.seed for c in cells}):
                targets.append((grid.frontier_path(out, scale.name, dataset, "base", seed), {}, ()))
                for variant in variants or ():
                    for lr in lr_rule(scale.engine, variant.method, args.lr, None)["grid"]:
                        path = grid.frontier_path(out, scale.name, dataset, grid.point_name(variant.name, lr), seed)
                        targets.append((path, given, declared.OPTIONS["frontier-point"]))
    else:
        for cell in cells:
            if command == "lira":
                from .attacks.lira import lira_path

                path = lira_path(out, scale.name, cell.dataset, cell_name(cell.method, cell.rank), cell.seed)
                targets.append((path, {**given, "references": args.references}, declared.OPTIONS["lira-references"]))
            elif command == "audit":
                from dataclasses import asdict, replace

                dp = replace(
                    scale.engine.dp, noise_multiplier=args.noise_multiplier or scale.engine.dp.noise_multiplier
                )
                path = grid.audit_path(out, scale, cell, dp, args.lr)
                canaries = asdict(CanaryConfig(canaries=args.canaries, guesses_each_side=args.guesses))
                audit_given = declared.run_options(
                    **given, canaries=canaries, dp=asdict(dp) if cell.method == "dpsgd" else None
                )
                targets.append((path, audit_given, declared.OPTIONS["canary-audit"]))
            else:
                targets.append((grid.result_path(out, scale, cell), given, declared.OPTIONS["cell"]))
    device = getattr(args, "device", "auto")
    for path, options, names in targets:
        # where it trains is known before torch only when --device names it (auto: checked when the record is written)
        names = tuple(n for n in names if n not in ("device", "precision")) + (("device",) if device != "auto" else ())
        options = {**options, "device": device}
        name = path.resolve().relative_to(root).as_posix()
        entry = declaration.get(name)
        if entry is None:
            raise ValueError(
                f"--out {args.out}: {name} is not declared in {root / declared.DECLARED} (what the chapters read); "
                "write this run to a folder of its own (--out results/pending), then declare its records there "
                "(python -m lorapriv_utils status --declare PATH)"
            )
        expected = {n: v for n, v in entry.get("options", {}).items() if n in names}
        found = {n: v for n, v in options.items() if n in names}
        if found != expected:
            raise ValueError(
                f"--out {args.out}: {name}: {declared.difference(found, expected, verb='this run gives')}; write "
                "experiments with other options to a folder of their own"
            )


def check_run_arguments(args: argparse.Namespace, sharded: bool = True) -> tuple:
    """Every check that needs no torch; returns the scale and this shard's cells (every cell: ``sharded=False``)."""
    scale = get_scale(args.scale)
    if args.command == "run":
        scale = own_scale(args, scale)
    if getattr(args, "data", None) is not None:  # a user's own corpus, named by own_scale
        datasets = [args.datasets]
    else:  # an empty --datasets "" is refused as "--datasets ," is, never read as the default
        datasets = (
            grid.parse_list("--datasets", args.datasets, data.DATASETS)
            if args.datasets is not None
            else list(scale.engine.datasets)
        )
    methods = grid.check_methods(grid.parse_list("--methods", args.methods, grid.METHODS))
    grid.check_ranks_given(args.ranks is not None, methods)
    ranks = grid.parse_ints("--ranks", args.ranks, 1) if args.ranks is not None else list(grid.DEFAULT_RANKS)
    seeds = grid.parse_ints("--seeds", args.seeds, 0)
    shard = grid.parse_shard(args.shard)
    if args.lr is not None and not 0 < args.lr < math.inf:
        raise ValueError(f"--lr: must be a finite number > 0, got {args.lr}")
    if args.lr is not None and args.lr_grid is not None:
        raise ValueError("--lr fixes the rate and --lr-grid sweeps rates: give one of them")
    if args.epochs is not None and args.epochs < 1:
        raise ValueError(f"--epochs: must be >= 1, got {args.epochs}")
    if args.threads is not None and args.threads < 1:
        raise ValueError(f"--threads: must be >= 1, got {args.threads}")
    if getattr(args, "accelerate", False) and args.command != "run":
        raise ValueError(f"--accelerate: only `run` trains data-parallel; drop it from `{args.command}`")
    optimizer = getattr(args, "optimizer", None)
    bound = [name for name in methods if optimizer_refused(name, optimizer)]
    if bound:
        raise ValueError(
            f"--optimizer {optimizer}: {', '.join(bound)} trains with {REGISTRY[bound[0]].optimizer} by definition; "
            "drop --optimizer or that method"
        )
    changed = [name for name in methods if optimizer not in (None, REGISTRY[name].optimizer)]
    out = getattr(args, "out", None)
    if changed and out is not None and _shared_out(Path(out)):
        raise ValueError(
            f"--optimizer {optimizer}: {', '.join(changed)} would train with {optimizer}, not its own "
            f"{REGISTRY[changed[0]].optimizer}, and its records would lie where that method's own do under {out}; "
            "give them an --out of their own (as make results-a6-projection does)"
        )
    per_text = [name for name in methods if REGISTRY[name].per_text]
    if getattr(args, "accelerate", False) and per_text:
        raise ValueError(
            f"--accelerate: {', '.join(per_text)} clip per text in one process, which every process would repeat; "
            "run them without --accelerate"
        )
    if args.command in ("frontier", "audit") and args.reference != "same":
        raise ValueError(
            f"--reference: `{args.command}` has no choice of reference model "
            "(the frontier's is each variant's own; the audit uses none); drop it"
        )
    own = (args.datasets,) if getattr(args, "data", None) is not None else ()
    cells = grid.plan(datasets, methods, ranks, seeds, own)
    grid.check_ranks(cells, scale)
    noisy = getattr(args, "noise_multiplier", None) is not None
    if noisy and not any(c.method in ("dpsgd", "rowscale") for c in cells):
        raise ValueError("--noise-multiplier: only dpsgd and rowscale cells add noise; drop it or add them")
    if args.command != "frontier":  # the frontier checks its own records, once its variants are known
        check_declared(args, scale, cells)
    check_writable(args.out)  # before any training: a bad folder costs a second, not a trained model
    for name in datasets:  # a missing local data folder, in one line
        if name in data.LOCAL_DATASETS and not args.hub:
            data.local_files(name, args.data_dir)
    if args.hub:  # hub data: one attempt, not a retry storm
        data.check_hub_reachable()
    elif scale.engine.model.hub_id:  # the paper scale's GPT-2 weights
        data.check_hub_reachable(needed_for=f"--scale {scale.name}: its base model {scale.engine.model.hub_id!r}")
    return scale, grid.shard(cells, *shard) if sharded else cells


def check_frontier_arguments(args: argparse.Namespace) -> tuple:
    """The frontier's checks (no torch); returns the scale, datasets, variants, seeds and checkpoints."""
    if args.epochs is not None:
        raise ValueError("--epochs: the frontier trains for the largest of --checkpoints; give those instead")
    chosen = grid.parse_list("--methods", args.methods, grid.METHODS)
    if args.noise is not None and "dpsgd" not in chosen:
        raise ValueError("--noise: only DP-SGD's curves (dpsgd) have a noise multiplier; drop it or add dpsgd")
    if args.dp_rank is not None and not {"dpsgd", "flora"} & set(chosen):
        raise ValueError("--dp-rank: only FLoRA's and DP-SGD's curves (flora, dpsgd) have it; drop it or add them")
    args.noise = ",".join(f"{z:g}" for z in grid.FRONTIER_NOISE) if args.noise is None else args.noise
    args.dp_rank = grid.FRONTIER_DP_RANK if args.dp_rank is None else args.dp_rank
    if args.dp_rank < 1:
        raise ValueError(f"--dp-rank: must be >= 1, got {args.dp_rank}")
    scale, cells = check_run_arguments(args, sharded=False)  # the frontier shards its own points
    try:
        grid.check_ranks([grid.Cell("ptb", "dpsgd", args.dp_rank, 0)], scale)
    except ValueError as err:
        raise ValueError(str(err).replace("--ranks", "--dp-rank", 1)) from None
    methods = grid.parse_list("--methods", args.methods, grid.METHODS)
    ranks = grid.parse_ints("--ranks", args.ranks, 1) if args.ranks is not None else list(grid.FRONTIER_RANKS)
    noise = grid.parse_floats("--noise", args.noise)
    checkpoints = grid.parse_ints("--checkpoints", args.checkpoints, 1)
    if not checkpoints or checkpoints != sorted(set(checkpoints)):
        raise ValueError(f"--checkpoints: give increasing epochs, got {args.checkpoints!r}")
    variants = [] if args.bases_only else grid.plan_variants(methods, ranks, noise, args.dp_rank)
    grid.check_ranks([grid.Cell("ptb", v.method, v.rank, 0) for v in variants], scale)
    check_declared(args, scale, cells, variants, checkpoints)
    datasets = sorted({c.dataset for c in cells}, key=[c.dataset for c in cells].index)
    seeds = sorted({c.seed for c in cells})
    return scale, datasets, variants, seeds, tuple(checkpoints)


def engine_runner(args: argparse.Namespace, scale, **options):
    """The runner of a command, once every argument is known to be good: torch comes in here (through
    transformers, whose logging and progress bars are quieted so that ours stay readable), the thread count
    is set, and ``options`` (``accelerate``, ``reference``) go to :class:`workspace.Workspace`."""
    import transformers

    from .experiments import workspace

    transformers.logging.set_verbosity_error()
    transformers.logging.disable_progress_bar()
    workspace.set_threads(args.threads)
    return workspace.Workspace(
        scale,
        args.out,
        run_overrides(args),
        data_dir=args.data_dir,
        hub=args.hub,
        device=args.device,
        progress=not args.no_progress,
        **options,
    )


def run_frontier(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    try:
        scale, datasets, variants, seeds, checkpoints = check_frontier_arguments(args)
    except (ValueError, FileNotFoundError, ConnectionError) as err:
        parser.error(str(err))
    try:
        work = engine_runner(args, scale)  # --epochs was refused above: the checkpoints set the epochs
        from .experiments import frontier

        records = frontier.run_frontier(
            work, datasets, variants, seeds, checkpoints, shard=grid.parse_shard(args.shard)
        )
    except (ValueError, FileNotFoundError, ConnectionError, RuntimeError) as err:
        parser.error(str(err))
    print(f"{len(records)} frontier records; results in {args.out / scale.name / 'frontier'}")
    return 0


def run_lira(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    try:
        if args.references < 2:
            raise ValueError(f"--references: offline LiRA needs at least 2, got {args.references}")
        scale, cells = check_run_arguments(args)
    except (ValueError, FileNotFoundError, ConnectionError) as err:
        parser.error(str(err))
    try:
        work = engine_runner(args, scale, reference=args.reference)
        from .attacks import lira

        for cell in cells:
            lira.run_cell_references(work, cell, args.references)
    except (ValueError, FileNotFoundError, ConnectionError, RuntimeError) as err:
        parser.error(str(err))
    print(f"{len(cells)} cells' LiRA references; results in {args.out / scale.name / 'lira'}")
    return 0


def run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    try:
        scale, cells = check_run_arguments(args)
        canaries = None
        if args.command == "audit":
            canaries = CanaryConfig(canaries=args.canaries, guesses_each_side=args.guesses)
            if args.noise_multiplier is not None and not args.noise_multiplier > 0:
                raise ValueError(f"--noise-multiplier: must be > 0, got {args.noise_multiplier}")
        else:
            check_launcher(args)

    except (ValueError, FileNotFoundError, ConnectionError) as err:
        parser.error(str(err))
    if canaries is None and (args.launcher != "local" or args.workers > 1):
        try:
            records = launched(args, scale, cells)
        except (ValueError, FileNotFoundError, ConnectionError, RuntimeError) as err:
            parser.error(str(err))
        print(report.as_text(report.summary_rows(records)))
        print(f"{len(cells)} cells done through --launcher {args.launcher}; results in {args.out / scale.name}")
        return 0
    try:
        work = engine_runner(args, scale, accelerate=args.accelerate, reference=args.reference)

        if canaries is not None:
            from dataclasses import replace

            dp = work.engine.dp
            if args.noise_multiplier is not None:
                dp = replace(dp, noise_multiplier=args.noise_multiplier)
            from .experiments import audit

            for cell in cells:
                done = audit.run_audit(work, cell, canaries, dp)["audit"]
                path = audit.audit_path(work.out, scale, cell, dp, work.overrides.lr)
                name = path.relative_to(Path(work.out) / scale.name / "audit").with_suffix("")
                print(
                    f"{name}: {done['right']} of {done['guesses']} guesses right on {done['canaries']} canaries, "
                    f"epsilon >= {done['epsilon_lower_bound']:.3f} (delta {done['delta']:g}, "
                    f"{done['confidence']:.0%} confidence); canary AUC {done['auc']:.3f}"
                )
            return 0
        from .experiments import runner

        records = runner.run(work, cells)
    except (ValueError, FileNotFoundError, ConnectionError, RuntimeError) as err:
        parser.error(str(err))
    if work.accelerator is None or work.accelerator.is_main_process:
        print(report.as_text(report.summary_rows(records)))
        print(f"{len(cells)} cells done; results in {args.out / scale.name}")
    return 0


def run_verify(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """The ``verify`` command: exit 1 when a recomputed number falls outside the declared tolerance."""
    from ..store import read_record

    try:
        if not args.record.is_file():
            raise FileNotFoundError(f"no record at {args.record}: give the JSON file of a committed grid cell")
        record = read_record(args.record, "cell")  # before torch: a damaged, altered or foreign record is one line
        dataset = record["manifest"]["cell"]["dataset"]
        if dataset in data.LOCAL_DATASETS:
            data.local_files(dataset, args.data_dir)
    except (ValueError, FileNotFoundError, KeyError) as err:
        parser.error(f"{args.record}: {err}")
    import transformers

    from .experiments import verify

    transformers.logging.set_verbosity_error()
    transformers.logging.disable_progress_bar()
    try:
        report = verify.recompute_cell(args.record, data_dir=args.data_dir)
    except (ValueError, FileNotFoundError, RuntimeError) as err:
        parser.error(str(err))
    print(verify.describe(report))
    for item in report["outside"]:
        print(f"  outside: {item['name']}: committed {item['committed']}, recomputed {item['recomputed']}")
    return 0 if report["passes"] else 1


def table(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """The ``table`` command: exit 1 when a record or scores file was damaged and skipped."""
    problems: list[str] = []
    try:
        sourced = report.load_sourced(args.results, args.published or None, problems, check_scores=True)
    except FileNotFoundError as err:
        parser.error(str(err))
    if args.csv:
        print(report.as_csv(report.csv_rows(sourced)), end="")
    elif args.cells:
        print(report.as_text(report.summary_rows([record for _, record in sourced])))
    else:
        print(report.as_method_text(report.method_rows(sourced)))
    for line in problems:  # after the table, never inside it
        print(line, file=sys.stderr)
    if problems:
        print(f"lorapriv table: {len(problems)} files skipped (damaged or partial): rerun them", file=sys.stderr)
        return 1
    return 0


def main(argv: list[str] | None = None) -> int:
    try:
        return _main(argv)
    except KeyboardInterrupt:
        print(
            "lorapriv: interrupted; every record finished so far is kept, and rerunning the same command resumes",
            file=sys.stderr,
        )
        return 130


def _main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv and argv[0] in PRODUCERS:
        import importlib

        parse(argv[0], argv[1:])  # its arguments checked here, before its module brings torch in
        module = importlib.import_module(f"{__package__}.{PRODUCERS[argv[0]][0]}")
        module.main(argv[1:])
        return 0
    top = build_parser()
    if argv and argv[0] in top.commands:  # an unknown option is named first, by its command's own parser
        refuse_unknown(top.commands[argv[0]], argv[1:])
    args = top.parse_args(argv)
    parser = top.commands[args.command]
    if args.command == "table":
        return table(args, parser)
    if args.command == "status":
        from ..catalogue import PUBLISHED
        from .records import status

        args.results = args.results or PUBLISHED
        if not Path(args.results).is_dir():
            parser.error(f"no results folder {args.results}; give the published folder (results/published)")
        if args.data_dir is not None and not Path(args.data_dir).is_dir():
            parser.error(f"--data-dir {args.data_dir}: no such folder; give the folder that holds enron/ and pubmed/")
        try:
            return status.main(args)
        except ValueError as err:  # a --data-dir that does not hold its corpora, a --declare that names no record
            parser.error(str(err))
    if args.command == "verify":
        return run_verify(args, parser)
    if args.command == "frontier":
        return run_frontier(args, parser)
    if args.command == "lira":
        return run_lira(args, parser)
    return run(args, parser)


if __name__ == "__main__":
    sys.exit(main())
