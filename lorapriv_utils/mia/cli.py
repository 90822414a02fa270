"""The membership-inference command line: ``python -m lorapriv_utils run --scale cpu-small --methods all``."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from ..scale import SCALES, get_scale
from . import data, finetune, runner


def _list(text: str, every: tuple[str, ...]) -> list[str]:
    return list(every) if text == "all" else [t.strip() for t in text.split(",") if t.strip()]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m lorapriv_utils", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run a membership-inference grid (resumable)")
    run.add_argument("--scale", default=os.environ.get("LORAPRIV_SCALE") or "cpu-small", choices=list(SCALES))
    run.add_argument(
        "--datasets",
        default=None,
        help=f"comma list or 'all' ({', '.join(data.DATASETS)}); default: the scale's own list",
    )
    run.add_argument("--methods", default="all", help=f"comma list or 'all' ({', '.join(finetune.METHODS)})")
    run.add_argument("--ranks", default="8,16", help="LoRA ranks for lora, flora and dpsgd")
    run.add_argument("--seeds", default="0")
    run.add_argument("--out", type=Path, default=Path("results"))
    run.add_argument("--data-dir", default=os.environ.get(data.DATA_ENV_VAR), help="folder with enron/ and pubmed/")
    run.add_argument("--hub", action="store_true", help="load corpora from the Hugging Face hub (needs internet)")
    run.add_argument("--shard", default="0/1", help="i/n: run every n-th cell starting at i")
    run.add_argument("--device", default="auto", choices=["auto", "cpu", "cuda", "mps"])
    run.add_argument("--optimizer", choices=["adamw", "sgd"], help="override every method's optimiser (default adamw)")
    run.add_argument("--lr", type=float, help="override every method's learning rate")
    run.add_argument("--epochs", type=int, help="override every method's number of epochs")
    run.add_argument(
        "--accelerate",
        action="store_true",
        help="data-parallel training through accelerate (launch with `accelerate launch -m "
        "lorapriv_utils run ... --accelerate` for several GPUs)",
    )
    run.add_argument("--no-progress", action="store_true")
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    import transformers

    transformers.logging.set_verbosity_error()  # keep our own progress bars readable
    transformers.logging.disable_progress_bar()
    try:
        scale = get_scale(args.scale)
        datasets = _list(args.datasets, data.DATASETS) if args.datasets else list(scale.engine.datasets)
        methods = _list(args.methods, finetune.METHODS)
        ranks = [int(r) for r in args.ranks.split(",") if r.strip()]
        seeds = [int(s) for s in args.seeds.split(",") if s.strip()]
        index, count = (int(x) for x in args.shard.split("/"))
        cells = runner.shard(runner.plan(datasets, methods, ranks, seeds), index, count)
        runner.check_ranks(cells, scale)
        work = runner.Runner(
            scale,
            args.out,
            runner.Overrides(epochs=args.epochs, lr=args.lr, optimizer=args.optimizer),
            data_dir=args.data_dir,
            hub=args.hub,
            device=args.device,
            progress=not args.no_progress,
            accelerate=args.accelerate,
        )
        for method in methods:  # fail early on an impossible learning rate or epoch count
            work.train_config(method, seeds[0] if seeds else 0)
        for name in datasets:  # fail early, with one line, on a missing local data folder
            if name in data.LOCAL_DATASETS and not args.hub:
                data.local_files(name, args.data_dir)
        work.run(cells)
    except (ValueError, FileNotFoundError, ConnectionError, RuntimeError) as err:
        parser.error(str(err))
    print(f"{len(cells)} cells done; results in {args.out / scale.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
