"""Run by tests/test_distributed.py under ``torch.distributed.run`` (two CPU processes, gloo).

``finetune OUT``: fine-tune a tiny GPT-2 with each method through the runner's accelerator and
write, from rank 0, each model's per-block losses to OUT (JSON).
``cli ARGS...``: the command line with the tiny model and run configuration the runner tests use.
"""

import json
import sys
from dataclasses import replace

import numpy as np
import torch

from lorapriv_utils.mia import cli
from lorapriv_utils.mia.engine import finetune, models
from lorapriv_utils.mia.engine.training import TrainConfig, block_losses
from lorapriv_utils.mia.experiments import workspace
from lorapriv_utils.scale import SCALES, Hparams, ModelSpec

# The one tiny model of the engine tests: untrained (tiny_base) or pre-trained once per test session
# (conftest.engine_cache) as the base of the tiny scales below.
TINY = ModelSpec(n_layer=1, n_embd=16, n_head=2, block_size=12, vocab_size=300, pretrain_epochs=1, batch_size=32)
SHORT = replace(TINY, block_size=8)  # the same model with a context of 8: the windowing tests' texts span several
# The default scale with a tiny model and one epoch: same name, so results land under cpu-small/.
SCALE = replace(
    SCALES["cpu-small"],
    engine=replace(
        SCALES["cpu-small"].engine,
        model=TINY,
        dense=Hparams(epochs=1, lr_grid=(1e-3, 3e-3), batch_size=16),
        lora=Hparams(epochs=1, lr_grid=(1e-2, 3e-2), batch_size=16),
        max_texts_per_part=60,
        max_validation_texts=30,
        synthetic_count=200,
        bootstrap_resamples=20,
    ),
)
# The same tiny settings in Llama's architecture (grouped-query attention: v_proj is 8 x 16).
LLAMA_SPEC = replace(TINY, family="llama", n_kv_head=1)
LLAMA_SCALE = replace(SCALE, engine=replace(SCALE.engine, model=LLAMA_SPEC))
METHODS = {"full": None, "adapter": None, "lora": 2, "flora": 2}


def tiny_base() -> torch.nn.Module:
    torch.manual_seed(0)
    return models.new_model(TINY, 300, 0)


def tiny_llama() -> torch.nn.Module:
    return models.new_model(LLAMA_SPEC, 300, 0, seed=0)


def tiny_blocks() -> np.ndarray:
    return np.random.default_rng(0).integers(0, 300, size=(24, TINY.block_size))  # three whole batches of 8


def train_config() -> TrainConfig:
    return TrainConfig(epochs=2, lr=1e-2, batch_size=8, seed=2)


def fine_tune_all(accelerator=None) -> dict:
    out = {}
    for method, rank in METHODS.items():
        model, stats = finetune.fine_tune(
            tiny_base(), method, tiny_blocks(), train_config(), rank=rank, accelerator=accelerator
        )
        out[method] = {"losses": block_losses(model, tiny_blocks()).tolist(), "stats": stats}
    return out


def main(argv: list[str]) -> int:
    if argv[0] == "finetune":
        accelerator = workspace.make_accelerator(torch.device("cpu"), None)
        result = fine_tune_all(accelerator)
        result["num_processes"] = accelerator.num_processes
        if accelerator.is_main_process:
            with open(argv[1], "w", encoding="utf-8") as handle:
                json.dump(result, handle)
        return 0
    SCALES["cpu-small"] = SCALE
    return cli.main(argv[1:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
