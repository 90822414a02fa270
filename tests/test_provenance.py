import re

from lorapriv_utils import provenance


def test_package_versions():
    assert provenance.package_version("numpy") != "unknown"
    assert provenance.package_version("no-such-package-lorapriv") == "unknown"
    assert set(provenance.package_versions()) == set(provenance.MANIFEST_PACKAGES)


def test_git_commit_is_a_hash_or_unknown():
    commit = provenance.git_commit()
    assert commit == "unknown" or re.fullmatch(r"[0-9a-f]{40}", commit)
