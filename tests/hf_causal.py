"""Tiny causal language models saved as a user saves one to generate with: the model with its
language-model head (``AutoModelForCausalLM``) and a local tokenizer, in a models folder.

The architectures and weights are tests/hf_models.py's ``parity_configs`` and
``more_parity_configs`` (weights large enough for peaked attention); that module's
``save_model`` saves the base model, whose untied head (Llama, Mistral) would be missing. Import
after ``pytest.importorskip("transformers")``.
"""

from __future__ import annotations

from pathlib import Path

from hf_models import make_tokenizer, more_parity_configs, parity_configs

PROMPT = "the cat sat on a mat"  # six tokens of the local tokenizer (no BOS is added)


def save_causal_lm(name: str, folder: Path, seed: int = 0, **changes) -> Path:
    """The ``parity_configs()[name]`` (or ``more_parity_configs()``) model with its LM head
    (torch seed ``seed``; ``changes`` set on the config first), saved with its tokenizer to
    ``folder``; returns the folder."""
    import torch
    from transformers import AutoModelForCausalLM

    config, bert, pad = (parity_configs() | more_parity_configs())[name]
    for key, value in changes.items():
        setattr(config, key, value)
    torch.manual_seed(seed)
    AutoModelForCausalLM.from_config(config).save_pretrained(folder)
    make_tokenizer(bert, pad).save_pretrained(folder)
    return Path(folder)
