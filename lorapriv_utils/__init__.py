"""lorapriv_utils: the package behind the lorapriv book.

Three families, and what each may import (a test holds these rules):

* ``theory``: the numpy/scipy mathematics of both papers, one module per idea.  It never
  imports torch, the engine or the chapters.
* ``mia``: the membership-inference engine (data, tokenizers, models, training, fine-tuning
  methods, attacks and metrics, the grid runner and its command line).  It never imports
  the chapters.
* ``chapters``: one module per book chapter that turns measurements into tables and
  ledger claims.  A chapter never imports another chapter.

Helpers that every family may use sit at the top: ``scale`` (the one record per run
scale), ``ledger`` (the claims register and the checks), ``numbers``, ``files``,
``provenance`` and ``plots``.
"""
