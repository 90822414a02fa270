"""``python -m lorapriv_utils``: the membership-inference command line (``lorapriv_utils.mia.cli``)."""

import sys

from .mia.cli import main

if __name__ == "__main__":
    sys.exit(main())
