"""Model families: what the engine needs to know about a causal language model's architecture.

Every method adapts "the adapted projections": the weight matrices W that paper A's LoRA factorises
(W + B A, A of shape r x m, B of shape n x r).  Which modules those are, and how their weights are
stored, differs by family:

* ``gpt2``: the fused attention projection ``c_attn`` (queries, keys and values, 3d x d) of every
  block, a ``Conv1D`` that stores its weight transposed, (in, out) (PEFT's ``fan_in_fan_out=True``);
  a learned position embedding ``wpe``.
* ``llama``: the query and value projections ``q_proj`` and ``v_proj`` of every block (LoRA's
  original choice, and PEFT's default for Llama), ``nn.Linear`` modules that store (out, in); rotary
  positions, no position embedding.  The value projection is n_kv_head x head width tall under
  grouped-query attention.

The rest of the engine asks a family through :func:`family_of` (a model, PEFT-wrapped or not) or
:func:`get` (a ``ModelSpec``'s ``family``); no module names a GPT-2 or Llama attribute itself.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

from ...scale import ModelSpec

__all__ = ["FAMILIES", "Family", "family_of", "get"]


def _gpt2_config(spec: ModelSpec, vocab_size: int, eos_id: int):
    from transformers import GPT2Config

    # Dropout off: training stays deterministic and per-sample gradients (DP-SGD) are exact.
    return GPT2Config(
        vocab_size=vocab_size,
        n_positions=spec.block_size,
        n_embd=spec.n_embd,
        n_layer=spec.n_layer,
        n_head=spec.n_head,
        n_inner=spec.n_inner,
        resid_pdrop=0.0,
        embd_pdrop=0.0,
        attn_pdrop=0.0,
        bos_token_id=eos_id,
        eos_token_id=eos_id,
        pad_token_id=eos_id,
        attn_implementation="eager",  # plain attention: per-sample gradients (torch.func, Opacus) trace through it
    )


def _llama_config(spec: ModelSpec, vocab_size: int, eos_id: int):
    from transformers import LlamaConfig

    return LlamaConfig(
        vocab_size=vocab_size,
        hidden_size=spec.n_embd,
        intermediate_size=spec.n_inner or 4 * spec.n_embd,
        num_hidden_layers=spec.n_layer,
        num_attention_heads=spec.n_head,
        num_key_value_heads=spec.n_kv_head or spec.n_head,
        max_position_embeddings=spec.block_size,
        tie_word_embeddings=True,  # as SmolLM2's small models
        attention_dropout=0.0,
        bos_token_id=eos_id,
        eos_token_id=eos_id,
        pad_token_id=eos_id,
        attn_implementation="eager",
    )


def _attribute(root, path: str):
    for name in path.split("."):
        root = getattr(root, name)
    return root


@dataclass(frozen=True)
class Family:
    """One architecture: its transformers classes, its blocks, its adapted projections and their layout."""

    name: str
    model_class: str  # the transformers class of the causal LM
    blocks_path: str  # where the list of blocks sits in the unwrapped model
    targets: tuple[str, ...]  # the adapted projections' module names within a block (PEFT's target_modules)
    fan_in_fan_out: bool  # the adapted weights are stored (in, out), as GPT-2's Conv1D does
    position_path: str | None  # a learned position embedding's weight (None: rotary positions)
    context_field: str  # the config field that holds the context length
    make_config: Callable[[ModelSpec, int, int], object]

    def model(self, spec: ModelSpec, vocab_size: int, eos_id: int) -> torch.nn.Module:
        """A randomly initialised model of ``spec`` (seed torch first for a reproducible draw)."""
        import transformers

        return getattr(transformers, self.model_class)(self.make_config(spec, vocab_size, eos_id))

    def from_pretrained(self, source, **kwargs) -> torch.nn.Module:
        import transformers

        return getattr(transformers, self.model_class).from_pretrained(source, **kwargs)

    def blocks(self, model: torch.nn.Module) -> list[torch.nn.Module]:
        return list(_attribute(unwrap(model), self.blocks_path))

    def adapted_modules(self, model: torch.nn.Module) -> list[torch.nn.Module]:
        """The adapted projections, block by block and in ``targets`` order within a block (before PEFT wraps
        them; on a PEFT model, the LoRA layers in the same order)."""
        out = []
        for block in self.blocks(model):
            named = {name.rsplit(".", 1)[-1]: module for name, module in block.named_modules()}
            out += [named[target] for target in self.targets]
        return out

    def adapted_weights(self, model: torch.nn.Module) -> list[torch.nn.Parameter]:
        """The adapted projections' weights as stored (a PEFT layer's base weight)."""
        return [getattr(module, "base_layer", module).weight for module in self.adapted_modules(model)]

    def block_weights(self, model: torch.nn.Module, block: int) -> list[torch.nn.Parameter]:
        """The adapted weights of block ``block`` (0-based), as stored; a clear error outside the model."""
        count = self.layer_count(model)
        if not 0 <= block < count:
            raise ValueError(f"layer must lie in [0, {count - 1}] for a {count}-block model, got {block}")
        per_block = len(self.targets)
        return self.adapted_weights(model)[block * per_block : (block + 1) * per_block]

    def paper(self, weight: torch.Tensor) -> torch.Tensor:
        """A stored adapted weight (or its gradient) as paper A's W: n x m, output by input."""
        return weight.T if self.fan_in_fan_out else weight

    def input_width(self, weight: torch.Tensor) -> int:
        """m, the input width of a stored adapted weight (the side LoRA's A, r x m, projects)."""
        return int(weight.shape[0 if self.fan_in_fan_out else -1])

    def project_inputs(self, G: torch.Tensor, A: torch.Tensor) -> torch.Tensor:
        """G M with M = A^T A on the input side, in G's stored layout: A^T (A G) for GPT-2's (in, out) Conv1D,
        (G A^T) A for an (out, in) Linear (paper A's G M either way)."""
        return A.T @ (A @ G) if self.fan_in_fan_out else (G @ A.T) @ A

    def adapted_shapes(self, model: torch.nn.Module) -> list[tuple[int, int]]:
        """(n, m) of each adapted projection: its output and input widths."""
        return [tuple(int(s) for s in self.paper(w).shape) for w in self.adapted_weights(model)]

    def position_embedding(self, model: torch.nn.Module) -> torch.nn.Parameter | None:
        return None if self.position_path is None else _attribute(unwrap(model), self.position_path)

    def embedding_weights(self, model: torch.nn.Module) -> list[torch.nn.Parameter]:
        """The embeddings: the token embedding, the output head when it is not tied to it, and a learned
        position embedding (each parameter once)."""
        inner = unwrap(model)
        weights = [inner.get_input_embeddings().weight, inner.get_output_embeddings().weight]
        weights.append(self.position_embedding(model))
        out: list[torch.nn.Parameter] = []
        for weight in weights:
            if weight is not None and all(weight is not seen for seen in out):
                out.append(weight)
        return out

    def context(self, model: torch.nn.Module) -> int:
        return int(getattr(unwrap(model).config, self.context_field))

    def layer_count(self, model: torch.nn.Module) -> int:
        return len(self.blocks(model))


GPT2 = Family(
    name="gpt2",
    model_class="GPT2LMHeadModel",
    blocks_path="transformer.h",
    targets=("c_attn",),
    fan_in_fan_out=True,
    position_path="transformer.wpe.weight",
    context_field="n_positions",
    make_config=_gpt2_config,
)
LLAMA = Family(
    name="llama",
    model_class="LlamaForCausalLM",
    blocks_path="model.layers",
    targets=("q_proj", "v_proj"),
    fan_in_fan_out=False,
    position_path=None,
    context_field="max_position_embeddings",
    make_config=_llama_config,
)
FAMILIES: dict[str, Family] = {f.name: f for f in (GPT2, LLAMA)}


def get(name: str) -> Family:
    """The family called ``name``; a clear error lists the supported ones."""
    try:
        return FAMILIES[name]
    except KeyError:
        raise ValueError(f"unknown model family {name!r}; the engine supports {', '.join(FAMILIES)}") from None


def unwrap(model: torch.nn.Module) -> torch.nn.Module:
    """The transformers model inside a PEFT wrapper (itself otherwise)."""
    return model.get_base_model() if hasattr(model, "get_base_model") else model


def family_of(model: torch.nn.Module) -> Family:
    """The family of a transformers causal LM, PEFT-wrapped or not, by its config's ``model_type``."""
    model_type = getattr(getattr(unwrap(model), "config", None), "model_type", None)
    if model_type not in FAMILIES:
        raise ValueError(
            f"the engine does not support {type(unwrap(model)).__name__} (model type {model_type!r}); "
            f"supported families: {', '.join(FAMILIES)}"
        )
    return FAMILIES[model_type]
