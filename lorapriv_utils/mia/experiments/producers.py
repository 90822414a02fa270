"""The command lines of the producers of committed measurements (``python -m lorapriv_utils dp-compare ...``): each
parser and its checks, torch-free, so that a mistake is reported in well under a second, before the producer's
module (and torch) is imported.  Each producer's ``main`` parses through :func:`parse` too."""

from __future__ import annotations

import argparse
from pathlib import Path

from .grid import parse_ints, parse_shard

WHITEBOX_RANKS = (1, 8, 64)  # whitebox.RANKS (a test holds the two equal)
DP_COMPARE_SEEDS = (0, 1)  # dp_compare.SEEDS (likewise)

# name: (module under lorapriv_utils.mia, what it does)
PRODUCERS = {
    "dp-compare": (
        "experiments.dp_compare",
        "DP-SGD on four weight sets and compressed DP-SGD, with attacks (resumable)",
    ),
    "whitebox": ("experiments.whitebox", "the DP game against LoRA-FA's release, A known and A secret"),
    "multiplier": (
        "experiments.multiplier",
        "section 5.1's multiplier on per-text gradients of the scale's base model",
    ),
    "alignment": ("experiments.alignment", "paper B's gradient alignment at the start of fine-tuning"),
    "cost": ("experiments.cost", "row scaling's time and memory against LoRA-FA and LoRA, each in its own process"),
}


def _threads(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"an integer >= 1, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"an integer >= 1, got {value}")
    return value


def _parser(name: str) -> argparse.ArgumentParser:
    return argparse.ArgumentParser(
        prog=f"python -m lorapriv_utils {name}", description=PRODUCERS[name][1], allow_abbrev=False
    )


def refuse_unknown(parser: argparse.ArgumentParser, argv: list[str]) -> None:
    """An option the producer does not have is named first (argparse would first complain of a missing one)."""
    known = set(parser._option_string_actions)
    unknown = [a for a in argv if a.startswith("-") and a.split("=", 1)[0] not in known and not _number(a)]
    if unknown:
        parser.error(f"unrecognized arguments: {' '.join(unknown)}")


def _number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def parse(name: str, argv: list[str]) -> argparse.Namespace:
    """The checked arguments of producer ``name`` (a usage error, one line, and exit 2 otherwise)."""
    if name not in PRODUCERS:
        raise KeyError(f"no producer {name!r}; producers: {', '.join(PRODUCERS)}")
    parser = _parser(name)
    _add_arguments(name, parser)
    refuse_unknown(parser, argv)
    return _checked(name, parser, parser.parse_args(argv))


def _add_arguments(name: str, parser: argparse.ArgumentParser) -> None:
    if name == "dp-compare":
        parser.add_argument("--out", required=True, type=Path, help="results folder (records: OUT/dp_compare/SCALE)")
        parser.add_argument("--threads", type=_threads, default=None, help="torch CPU threads (default: every core)")
        parser.add_argument("--seeds", default=",".join(map(str, DP_COMPARE_SEEDS)), help="seeds (%(default)s)")
        parser.add_argument("--shard", default="0/1", help="K/N: run every N-th cell from the K-th (default: all)")
    elif name == "whitebox":
        parser.add_argument("path", help="the JSON file to write")
        parser.add_argument("--threads", type=_threads, default=None, help="torch CPU threads (default: every core)")
        parser.add_argument(
            "--ranks", default=",".join(map(str, WHITEBOX_RANKS)), help=f"ranks this process plays, of {WHITEBOX_RANKS}"
        )
        parser.add_argument("--parts", default=None, help="folder that keeps each finished rank's row")
    else:  # a measurement: one JSON file to write, the scale from LORAPRIV_SCALE
        parser.add_argument("path", help="the JSON file to write (the scale from LORAPRIV_SCALE)")


def _checked(name: str, parser: argparse.ArgumentParser, args: argparse.Namespace) -> argparse.Namespace:
    if name == "dp-compare":
        try:
            args.seeds = tuple(parse_ints("--seeds", args.seeds, 0))
            args.shard = parse_shard(args.shard)
        except ValueError as err:
            parser.error(str(err))
    elif name == "whitebox":
        try:
            args.ranks = tuple(parse_ints("--ranks", args.ranks, minimum=1))
        except ValueError as err:
            parser.error(str(err))
        if not set(args.ranks) <= set(WHITEBOX_RANKS):
            parser.error(f"--ranks must be among {', '.join(map(str, WHITEBOX_RANKS))}, got {args.ranks}")
        if set(args.ranks) != set(WHITEBOX_RANKS) and args.parts is None:
            parser.error("--ranks short of every rank needs --parts DIR, where the ranks are kept until all have run")
    if hasattr(args, "path") and not str(args.path).endswith(".json"):
        parser.error(f"{args.path}: give the path of a .json file to write")
    return args


def measurement_main(argv: list[str] | None, prog: str, make_record, kind: str) -> None:
    """The command line of a committed measurement, ``python -m PROG PATH.json`` (scale from LORAPRIV_SCALE):
    ``make_record()`` written as JSON atomically, with the spec of measurement ``kind`` and a checksum."""
    import sys

    from ...scale import current_scale
    from ...store import seal, write_record
    from ..records.specs import measurement_spec

    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1 or args[0].startswith("-") or not args[0].endswith(".json"):
        raise SystemExit(f"usage: python -m {prog} PATH.json  (scale from LORAPRIV_SCALE)")
    record = write_record(args[0], seal(make_record(), measurement_spec(kind, current_scale()), kind))
    print(f"wrote {args[0]} in {record['wall_seconds']:.0f} s")
