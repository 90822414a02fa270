"""Paper A, section 6, by sub-topic; :mod:`lorapriv_utils.chapters.a6_membership` gathers them."""
