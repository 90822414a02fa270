"""The mathematics of both papers in numpy and scipy, one module per idea; no torch here."""
