"""One module per book chapter: measurements turned into tables and ledger claims.

Each module's ``KEY`` is the chapter's one name: the stem of its book page
(``book/paper_*/KEY.md``), its notebook pair (``notebooks/KEY.ipynb`` and ``.py``), its
ledger file (``ledger/KEY.json``) and its test file (``tests/test_KEY.py``).  A chapter
module never imports another one.
"""
