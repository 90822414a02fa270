"""The membership-inference engine of paper A, section 6 (torch, transformers, PEFT, Opacus)."""
