"""A grid cell as a job: one picklable callable per run, and the launchers that run a grid's cells
(``python -m lorapriv_utils run --launcher ...``).

:class:`CellJob` holds plain data (the scale record, the output folder, the run's options) and trains one cell when
called: what a process pool, Slurm or submitit's local executor runs.  Its result is the path of the record it
wrote.  The results store keys every record by its spec, so a job whose record is current does nothing, and a job
stopped half way (killed, preempted) resumes from its journal when run again: submitit requeues a preempted job
through :meth:`CellJob.checkpoint`.

Launchers, one registry (:data:`LAUNCHERS`):

* ``local`` (the default): the cells one after another in this process, or with ``--workers N`` in a pool of N
  one-thread processes;
* ``slurm``: a Slurm job array through submitit (``map_array``), one one-core job a cell, at most ``--max-running``
  at once, its logs in ``OUT/.submitit``;
* ``submitit-local``: the same jobs through submitit's local executor, as processes on this machine (to try a Slurm
  setup without a cluster; the tests use it).
"""

from __future__ import annotations

from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from multiprocessing import get_context
from pathlib import Path

from ...scale import Scale
from .grid import Cell


@dataclass(frozen=True)
class Slurm:
    """What a Slurm job array asks for: the partition, each job's time limit and memory, and how many run at
    once."""

    partition: str | None = None
    time_min: int = 240
    mem_gb: int = 16
    max_running: int = 32
    gpus: int = 0


@dataclass(frozen=True)
class CellJob:
    """Train one grid cell (the argument) into ``out`` with the run's options; returns its record's path."""

    scale: Scale
    out: str
    overrides: object = None  # a workspace.Overrides (None: the scale's defaults)
    data_dir: str | None = None
    reference: str = "same"
    device: str = "cpu"
    threads: int = 1
    hub: bool = False
    progress: bool = False

    def __call__(self, cell: Cell) -> str:
        from .grid import result_path
        from .runner import run
        from .workspace import Overrides, Workspace, set_threads

        set_threads(self.threads)
        work = Workspace(
            self.scale,
            Path(self.out),
            self.overrides or Overrides(),
            data_dir=self.data_dir,
            hub=self.hub,
            device=self.device,
            progress=self.progress,
            reference=self.reference,
        )
        run(work, [cell])
        return str(result_path(self.out, self.scale, cell))

    def checkpoint(self, *args, **kwargs):
        """submitit's hook on preemption: run the same cell again, which resumes from its journal."""
        import submitit

        return submitit.helpers.DelayedSubmission(self, *args, **kwargs)


def _local(job: CellJob, cells: list[Cell], workers: int = 1, **_) -> list[str]:
    if workers <= 1:
        return [job(cell) for cell in cells]
    with ProcessPoolExecutor(max_workers=workers, mp_context=get_context("spawn")) as pool:
        return list(pool.map(job, cells))


def _submitted(executor, job: CellJob, cells: list[Cell]) -> list[str]:
    return [submitted.result() for submitted in executor.map_array(job, cells)]


def _slurm(job: CellJob, cells: list[Cell], slurm: Slurm | None = None, **_) -> list[str]:
    import submitit

    slurm = slurm or Slurm()
    executor = submitit.AutoExecutor(folder=Path(job.out) / ".submitit" / "%j", cluster="slurm")
    executor.update_parameters(
        timeout_min=slurm.time_min,
        mem_gb=slurm.mem_gb,
        cpus_per_task=job.threads,
        gpus_per_node=slurm.gpus or None,
        slurm_partition=slurm.partition,
        slurm_array_parallelism=slurm.max_running,
    )
    return _submitted(executor, job, cells)


def _submitit_local(job: CellJob, cells: list[Cell], slurm: Slurm | None = None, **_) -> list[str]:
    import submitit

    executor = submitit.LocalExecutor(folder=Path(job.out) / ".submitit" / "%j")
    executor.update_parameters(timeout_min=(slurm or Slurm()).time_min)
    return _submitted(executor, job, cells)


LAUNCHERS = {"local": _local, "slurm": _slurm, "submitit-local": _submitit_local}


def launch(job: CellJob, cells: list[Cell], launcher: str = "local", **options) -> list[str]:
    """Run ``job`` on every cell through ``launcher`` (:data:`LAUNCHERS`); the records' paths, in the cells' order."""
    if launcher not in LAUNCHERS:
        raise ValueError(f"--launcher: choose one of {', '.join(LAUNCHERS)}, got {launcher!r}")
    return LAUNCHERS[launcher](job, list(cells), **options)
