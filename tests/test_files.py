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
