"""The membership-inference engine of paper A, section 6 (torch, transformers, PEFT, Opacus)."""

import warnings

with warnings.catch_warnings():
    # tqdm.auto (imported by transformers and the engine) warns once, at import, in a notebook kernel without
    # ipywidgets; its text-mode bar is what the book's notebooks want anyway
    warnings.filterwarnings("ignore", message="IProgress not found")
    import tqdm.auto  # noqa: F401
