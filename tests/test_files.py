import os
import stat

import pytest

from lorapriv_utils import files


def test_atomic_write_replaces_the_file_and_leaves_it_readable(tmp_path):
    path = tmp_path / "sub" / "result.json"
    files.atomic_write_text(path, "first")
    files.atomic_write_text(path, "second")
    assert path.read_text() == "second"
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o644  # not mkstemp's private 0600
    assert [p.name for p in path.parent.iterdir()] == ["result.json"]  # no temporary file left behind


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path):
    path = tmp_path / "result.json"
    files.atomic_write_text(path, "good")

    with pytest.raises(TypeError):
        files.atomic_write_bytes(path, object())  # not bytes: the write fails inside the temporary file
    assert path.read_text() == "good" and [p.name for p in tmp_path.iterdir()] == ["result.json"]


def test_a_lock_excludes_other_holders_and_dies_with_its_process(tmp_path):
    import subprocess
    import sys

    target = tmp_path / "cell.json"
    held = files.Lock(target)
    assert held.acquire(blocking=False)
    assert not files.Lock(target).acquire(blocking=False)  # another holder waits or skips
    held.release()
    other = files.Lock(target)
    assert other.acquire(blocking=False)
    other.release()
    code = f"from lorapriv_utils.files import Lock; Lock({str(target)!r}).acquire(); import os; os._exit(0)"
    subprocess.run([sys.executable, "-c", code], check=True)  # it exits holding the lock
    assert files.Lock(target).acquire(blocking=False)  # the system released it


def test_an_unwritable_folder_is_one_line(tmp_path):
    (tmp_path / "a-file").write_text("x")
    with pytest.raises(ValueError, match="--out: cannot write to .*a-file/results"):
        files.check_writable(tmp_path / "a-file" / "results")
    files.check_writable(tmp_path / "new" / "folder")
    assert list((tmp_path / "new" / "folder").iterdir()) == []  # the probe is removed


def test_an_atomic_folder_replaces_whole_or_not_at_all(tmp_path):
    from lorapriv_utils.files import atomic_folder

    target = tmp_path / "entry"
    target.mkdir()
    (target / "old.txt").write_text("old")
    with pytest.raises(RuntimeError):
        with atomic_folder(target) as tmp:
            (tmp / "half.txt").write_text("half")
            raise RuntimeError("interrupted")
    assert [p.name for p in target.iterdir()] == ["old.txt"]
    assert [p.name for p in tmp_path.iterdir()] == ["entry"]  # no temporary folder left behind
    with atomic_folder(target) as tmp:
        (tmp / "new.txt").write_text("new")
    assert [p.name for p in target.iterdir()] == ["new.txt"]
