"""The engine: corpora and tokenizers, base models and their families, the methods and the training loops (torch)."""
