"""Atomic file writes: a reader never sees a half-written result, ledger or manifest."""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import tempfile
from pathlib import Path

CACHE_ENV_VAR = "LORAPRIV_CACHE_DIR"


def cache_dir() -> Path:
    """The folder of the package's caches (base models, de-duplicated corpora): ``LORAPRIV_CACHE_DIR``, else
    ``~/.cache/lorapriv``."""
    return Path(os.environ.get(CACHE_ENV_VAR) or Path.home() / ".cache" / "lorapriv")


def atomic_write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file in the same folder and an atomic rename."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    atomic_write_bytes(path, text.encode("utf-8"))


@contextlib.contextmanager
def atomic_folder(folder: Path):
    """Yield a temporary folder beside ``folder``; on success it replaces ``folder`` in one rename (a cache entry
    is whole or absent), on any error it is removed."""
    folder = Path(folder)
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=folder.parent, prefix=f".{folder.name}."))
    try:
        yield tmp
        if folder.exists():
            shutil.rmtree(folder)
        os.replace(tmp, folder)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def cached_entry(folder: Path, required: tuple[str, ...], load, build, what: str, rebuilding: str):
    """``(load(folder), cached)`` for a cache entry, under the entry's lock (one process builds it, another waits
    and loads it): a complete entry (every ``required`` file present) is loaded; a missing one is built
    (``build()``, which writes it through :func:`atomic_folder`); a damaged one, whose ``load`` raises, is
    reported in one line and built again.  A built entry is loaded from disk too, so that a fresh and a cached
    run start from the same bits."""
    folder = Path(folder)
    with Lock(folder):
        if all((folder / name).is_file() for name in required):
            try:
                return load(folder), True
            except Exception as err:  # a truncated or edited cache entry: say so, and rebuild it
                print(
                    f"lorapriv: the cached {what} in {folder} is damaged ({type(err).__name__}); {rebuilding}",
                    file=sys.stderr,
                )
        build()
    return load(folder), False


def atomic_write_bytes(path: Path, payload: bytes) -> None:
    """Write ``payload`` to ``path`` through a temporary file in the same folder and an atomic rename."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
        os.chmod(tmp, 0o644)  # mkstemp makes files private (0600); results and pages are meant to be read
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def check_writable(folder: Path, option: str = "--out") -> None:
    """Make ``folder`` (and its parents) and write and remove a file in it, or say in one line why not:
    a run finds an unusable output folder before it trains, not after."""
    folder = Path(folder)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(dir=folder, prefix=".lorapriv-write-test.")
        os.close(fd)
        os.unlink(probe)
    except OSError as err:
        reason = err.strerror or type(err).__name__
        raise ValueError(f"{option}: cannot write to {folder} ({reason}); give a folder you can write to") from None


NETWORK_FILESYSTEMS = ("nfs", "nfs4", "cifs", "smb3", "smbfs", "lustre", "gpfs", "beegfs", "ceph", "fuse.sshfs", "9p")


def on_network_filesystem(folder: Path) -> bool:
    """Whether ``folder`` lies on a network file system (``/proc/mounts``; False where that cannot be read), where a
    lock file is kept after its release: another host's cached lookup could still find a removed one."""
    try:
        mounts = Path("/proc/mounts").read_text(encoding="utf-8").splitlines()
    except OSError:
        return False
    where = os.path.realpath(folder)
    best, kind = "", ""
    for line in mounts:
        parts = line.split()
        if len(parts) >= 3 and (where == parts[1] or where.startswith(parts[1].rstrip("/") + "/")):
            if len(parts[1]) > len(best):
                best, kind = parts[1], parts[2]
    return kind in NETWORK_FILESYSTEMS


class Lock:
    """An exclusive lock on ``path`` between processes (``fcntl.flock`` on a hidden ``.NAME.lock`` beside it,
    ignored by git): the system releases it when its holder exits, so a lock left by a dead process never
    blocks, and a clean release removes the file (but on a network file system, :func:`on_network_filesystem`).
    ``acquire(blocking=False)`` returns False when another process holds it."""

    def __init__(self, path: Path):
        path = Path(path)
        self.path = path.with_name(f".{path.name}.lock")
        self._fd: int | None = None

    def acquire(self, blocking: bool = True) -> bool:
        import fcntl

        self.path.parent.mkdir(parents=True, exist_ok=True)
        while True:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | (0 if blocking else fcntl.LOCK_NB))
            except BlockingIOError:
                os.close(fd)
                return False
            try:  # the holder before us may have removed the file on release: lock the file that is there now
                same = os.stat(self.path).st_ino == os.fstat(fd).st_ino
            except FileNotFoundError:
                same = False
            if same:
                self._fd = fd
                return True
            os.close(fd)

    def release(self) -> None:
        import fcntl

        if self._fd is not None:
            if not on_network_filesystem(self.path.parent):  # there a cached lookup could show a removed file
                self.path.unlink(missing_ok=True)  # while still held: a waiter then sees another file and retries
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> Lock:
        self.acquire()
        return self

    def __exit__(self, *exc) -> None:
        self.release()
