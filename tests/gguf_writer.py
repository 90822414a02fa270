"""Write a tiny Llama model and its BPE tokenizer as a GGUF file, as llama.cpp's converter lays one out.

The tests load it through the engine's GGUF source (``lorapriv_utils.mia.engine.pretrained``) and compare the
result with the model written: a round trip through transformers' GGUF loader, on a file of a few hundred
kilobytes instead of the 98 MB SmolLM2 file.
"""

import json

import gguf
import numpy as np
import torch


def _permute(weights: np.ndarray, n_head: int, n_kv_head: int | None = None) -> np.ndarray:
    """llama.cpp's reordering of q and k rows for its rotary layout (transformers' loader reverses it)."""
    if n_kv_head is not None and n_head != n_kv_head:
        n_head = n_kv_head
    rows = weights.shape[0] // n_head // 2
    return weights.reshape(n_head, 2, rows, *weights.shape[1:]).swapaxes(1, 2).reshape(weights.shape)


def write_tiny_llama(path, model: torch.nn.Module, tokenizer, quantise: bool = True) -> None:
    """``model`` (a LlamaForCausalLM with tied embeddings) and ``tokenizer`` (a byte-level BPE) as GGUF; the
    projections and MLP weights in Q4_1 when ``quantise`` (rows must be multiples of 32 wide), the rest F32."""
    config = model.config
    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_context_length(config.max_position_embeddings)
    writer.add_embedding_length(config.hidden_size)
    writer.add_block_count(config.num_hidden_layers)
    writer.add_feed_forward_length(config.intermediate_size)
    writer.add_head_count(config.num_attention_heads)
    writer.add_head_count_kv(config.num_key_value_heads)
    writer.add_layer_norm_rms_eps(config.rms_norm_eps)
    writer.add_rope_freq_base(10000.0)
    writer.add_rope_dimension_count(config.hidden_size // config.num_attention_heads)
    writer.add_vocab_size(config.vocab_size)
    bpe = json.loads(tokenizer.backend_tokenizer.to_str())["model"]
    tokens = [t for t, _ in sorted(bpe["vocab"].items(), key=lambda item: item[1])]
    merges = [m if isinstance(m, str) else " ".join(m) for m in bpe["merges"]]
    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre("default")
    writer.add_token_list(tokens)
    writer.add_token_types([3 if t == tokenizer.eos_token else 1 for t in tokens])
    writer.add_token_merges(merges)
    writer.add_bos_token_id(tokenizer.eos_token_id)
    writer.add_eos_token_id(tokenizer.eos_token_id)
    writer.add_pad_token_id(tokenizer.eos_token_id)
    names = gguf.get_tensor_name_map(gguf.MODEL_ARCH.LLAMA, config.num_hidden_layers)
    for name, tensor in model.state_dict().items():
        if name == "lm_head.weight":
            continue  # tied to the token embedding: llama.cpp writes it once
        array = tensor.detach().float().numpy()
        if name.endswith("q_proj.weight"):
            array = _permute(array, config.num_attention_heads)
        elif name.endswith("k_proj.weight"):
            array = _permute(array, config.num_attention_heads, config.num_key_value_heads)
        target = names.get_name(name, try_suffixes=(".weight", ".bias"))
        if quantise and array.ndim == 2 and "embed" not in name:
            kind = gguf.GGMLQuantizationType.Q4_1
            writer.add_tensor(target, gguf.quants.quantize(array, kind), raw_dtype=kind)
        else:
            writer.add_tensor(target, array)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
