"""Tiny random-initialised Hugging Face models and a local tokenizer, for the tests that need
real transformers models (capture, the layer adapter's parity): nothing is downloaded.

Import this only after ``pytest.importorskip("transformers")`` (and set ``HF_HUB_OFFLINE=1``
before transformers is imported): the builders import transformers and tokenizers inside.

* :func:`make_tokenizer` — a word-level tokenizer over :data:`VOCAB`, BERT-style or plain;
* :func:`configs` — one small config per architecture: BERT, GPT-2, Llama (GQA), Mistral
  (sliding window 3), Gemma 2 (soft-capping, a sliding layer), Qwen3 (QK-norm), each with
  whether its tokenizer is BERT-style and has a pad token;
* :func:`parity_configs` — the same architectures (and Llama with YaRN, linear and Llama 3
  RoPE scaling, Qwen 2 with biases, gpt-oss with sinks)
  with larger weights and each feature switched on where it shows, for the layer adapter's
  parity tests;
* :func:`save_model` — a model built from a config, saved with ``save_pretrained`` beside its
  tokenizer, the folder a user would load;
* :class:`Float64Lift` — Hugging Face's float32 steps of a ``model.double()`` run in float64,
  for the parity tests' 1e-10.
"""

from __future__ import annotations

import types
from pathlib import Path

WORDS = "the cat sat on a mat dog ran far away and then slept in sun".split()
SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]"]
VOCAB = {w: i for i, w in enumerate(SPECIALS + WORDS)}
SMALL = dict(hidden_size=16, num_hidden_layers=2, num_attention_heads=4, intermediate_size=32,
             vocab_size=len(VOCAB), max_position_embeddings=64)


def make_tokenizer(bert: bool, pad: bool = True):
    """A word-level tokenizer over VOCAB: BERT-style ([CLS] a [SEP] b [SEP], segment ids) or
    plain (GPT/Llama style, optionally without a pad token)."""
    from tokenizers import Tokenizer, models, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.WordLevel(VOCAB, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    specials = {"unk_token": "[UNK]"}
    if bert:
        tok.post_processor = processors.TemplateProcessing(
            single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
            special_tokens=[("[CLS]", VOCAB["[CLS]"]), ("[SEP]", VOCAB["[SEP]"])])
        specials |= {"cls_token": "[CLS]", "sep_token": "[SEP]"}
    if pad:
        specials["pad_token"] = "[PAD]"
    names = (["input_ids", "token_type_ids", "attention_mask"] if bert
             else ["input_ids", "attention_mask"])
    return PreTrainedTokenizerFast(tokenizer_object=tok, model_input_names=names, **specials)


def configs() -> dict:
    """name -> (config, BERT-style tokenizer, tokenizer has a pad token)."""
    from transformers import (
        BertConfig,
        Gemma2Config,
        GPT2Config,
        LlamaConfig,
        MistralConfig,
        Qwen3Config,
    )

    return {
        "bert": (BertConfig(**SMALL), True, True),
        "gpt2": (GPT2Config(n_embd=16, n_layer=2, n_head=4, vocab_size=len(VOCAB),
                            n_positions=64, bos_token_id=2, eos_token_id=3), False, True),
        "llama": (LlamaConfig(**SMALL, num_key_value_heads=2), False, False),  # GQA, no pad
        "mistral": (MistralConfig(**SMALL, num_key_value_heads=2, sliding_window=3), False,
                    True),
        "gemma2": (Gemma2Config(**SMALL, num_key_value_heads=2, head_dim=4, sliding_window=3,
                                layer_types=["sliding_attention", "full_attention"],
                                query_pre_attn_scalar=4, attn_logit_softcapping=5.0),
                   False, True),
        "qwen3": (Qwen3Config(**SMALL, num_key_value_heads=2, head_dim=4), False, True),  # QK-norm
    }


def save_model(config, bert: bool, pad: bool, folder: Path, seed: int = 0,
               bias_std: float = 0.0) -> Path:
    """A model of ``config`` with random weights (torch seed ``seed``) and its tokenizer,
    written to ``folder`` with save_pretrained; returns the folder. ``bias_std`` > 0 draws
    every bias from N(0, bias_std²) (transformers initialises them to 0, where dropping one
    would change nothing)."""
    import torch
    from transformers import AutoModel

    torch.manual_seed(seed)
    model = AutoModel.from_config(config)
    if bias_std > 0:
        with torch.no_grad():
            for name, param in model.named_parameters():
                if name.endswith(".bias"):
                    param.normal_(0.0, bias_std)
    model.save_pretrained(folder)
    make_tokenizer(bert, pad).save_pretrained(folder)
    return Path(folder)


PARITY_INIT = 0.5  # initializer_range: weights large enough for peaked attention


def parity_configs() -> dict:
    """name -> (config, BERT-style tokenizer, has a pad token) for the layer adapter's parity
    tests: weights drawn with std PARITY_INIT so that the attention is peaked (each feature
    then moves the probabilities well above 1e-3), and each feature switched on where it
    shows: Gemma 2's query_pre_attn_scalar (16) differs from its head_dim (4) and its cap (1)
    binds, Mistral's window (3) is shorter than the text, Qwen 2 has projection biases with
    RoPE, Llama with YaRN has an attention scaling, Llama with linear and Llama 3 scaling
    change the frequencies (Llama 3 each in its own band), gpt-oss has per-head sink logits (with
    YaRN, GQA, biases and a sliding layer)."""
    from transformers import (
        BertConfig,
        Gemma2Config,
        GPT2Config,
        GptOssConfig,
        LlamaConfig,
        MistralConfig,
        Qwen2Config,
        Qwen3Config,
    )

    small = SMALL | {"initializer_range": PARITY_INIT}
    yarn = {"rope_type": "yarn", "rope_theta": 10000.0, "factor": 4.0,
            "original_max_position_embeddings": 16}
    linear = {"rope_type": "linear", "rope_theta": 10000.0, "factor": 2.0}
    # original context 16 puts the two frequencies of a head of 4 in two different bands
    llama3 = {"rope_type": "llama3", "rope_theta": 10000.0, "factor": 8.0,
              "low_freq_factor": 1.0, "high_freq_factor": 4.0,
              "original_max_position_embeddings": 16}
    return {
        "bert": (BertConfig(**small), True, True),
        "gpt2": (GPT2Config(n_embd=16, n_layer=2, n_head=4, vocab_size=len(VOCAB),
                            n_positions=64, bos_token_id=2, eos_token_id=3,
                            initializer_range=PARITY_INIT), False, True),
        "llama": (LlamaConfig(**small, num_key_value_heads=2), False, False),
        "llama_yarn": (LlamaConfig(**small, num_key_value_heads=2, rope_parameters=yarn),
                       False, True),
        "llama_linear": (LlamaConfig(**small, num_key_value_heads=2, rope_parameters=linear),
                         False, True),
        "llama3": (LlamaConfig(**small, num_key_value_heads=2, rope_parameters=llama3),
                   False, True),
        "mistral": (MistralConfig(**small, num_key_value_heads=2, sliding_window=3), False,
                    True),
        "gemma2": (Gemma2Config(**small, num_key_value_heads=2, head_dim=4, sliding_window=3,
                                layer_types=["sliding_attention", "full_attention"],
                                query_pre_attn_scalar=16, attn_logit_softcapping=1.0),
                   False, True),
        "qwen2": (Qwen2Config(**small, num_key_value_heads=2), False, True),
        "qwen3": (Qwen3Config(**small, num_key_value_heads=2, head_dim=4), False, True),
        "gpt_oss": (GptOssConfig(**small, num_key_value_heads=2, head_dim=4,
                                 num_local_experts=2, num_experts_per_tok=1, sliding_window=3,
                                 layer_types=["sliding_attention", "full_attention"],
                                 rope_parameters=yarn | {"rope_theta": 150000.0,
                                                         "beta_fast": 32.0, "beta_slow": 1.0,
                                                         "truncate": False}),
                    False, True),
    }


class Float64Lift:
    """Within the block, Hugging Face's float32 steps of a float64 model run in float64:

    * ``torch.nn.functional.softmax(..., dtype=torch.float32)`` (the eager attention of the
      Llama family) computes in its input's dtype;
    * every rotary embedding computes its table as its forward does, in float64 instead of
      float32 (``position_ids.float() * inv_freq.float()``);
    * Qwen 3's q_norm / k_norm compute their RMSNorm without the cast to float32;
    * with ``freqs=True``, the default RoPE's inverse frequencies base^(−2i/d) are computed
      again in float64 (Hugging Face computes them in float32: a relative rounding of ~6e-8,
      ~1e-9 in the probabilities at 13 tokens) — for a recomputation that computes them
      itself, as the RoPE variant does.

    ``softmax_dtypes`` and ``rotary_dtypes`` record what each step ran in.
    """

    def __init__(self, model, *, freqs: bool = False):
        self.model = model
        self.freqs = freqs
        self.softmax_dtypes: list = []
        self.rotary_dtypes: list = []
        self.undo: list = []

    def __enter__(self):
        import torch

        original = torch.nn.functional.softmax

        def softmax(x, dim=None, _stacklevel=3, dtype=None):
            if dtype == torch.float32 and x.dtype == torch.float64:
                dtype = torch.float64
            out = original(x, dim=dim, dtype=dtype)
            self.softmax_dtypes.append(out.dtype)
            return out

        torch.nn.functional.softmax = softmax
        self.undo.append(lambda: setattr(torch.nn.functional, "softmax", original))
        for module in self.model.modules():
            if hasattr(module, "inv_freq") and hasattr(module, "attention_scaling"):
                if self.freqs:
                    self._float64_freqs(module)
                self._patch(module, self._rotary)
            if type(module).__name__ == "Qwen3Attention":
                self._patch(module.q_norm, _rms_norm64)
                self._patch(module.k_norm, _rms_norm64)
        return self

    def __exit__(self, *exc):
        for undo in reversed(self.undo):
            undo()

    def _patch(self, module, forward) -> None:
        module.forward = types.MethodType(forward, module)
        self.undo.append(lambda: delattr(module, "forward"))

    def _float64_freqs(self, module) -> None:
        import numpy as np
        import torch

        saved = module.inv_freq
        d = 2 * saved.numel()
        base = self.model.config.rope_parameters["rope_theta"]
        module.inv_freq = torch.tensor(base ** (-np.arange(0, d, 2) / d), dtype=torch.float64)
        self.undo.append(lambda: setattr(module, "inv_freq", saved))

    def _rotary(self, module, x, position_ids):
        # LlamaRotaryEmbedding.forward with float64 in place of float32 (gpt-oss's table has
        # one column per pair, not the two halves repeated)
        import torch

        freqs = position_ids[..., None].double() * module.inv_freq.double()
        gpt_oss = type(module).__name__ == "GptOssRotaryEmbedding"
        emb = freqs if gpt_oss else torch.cat((freqs, freqs), dim=-1)
        cos, sin = emb.cos() * module.attention_scaling, emb.sin() * module.attention_scaling
        self.rotary_dtypes.append(cos.dtype)
        return cos.to(dtype=x.dtype), sin.to(dtype=x.dtype)


def _rms_norm64(module, hidden_states):
    """Qwen3RMSNorm.forward without its cast to float32."""
    import torch

    variance = hidden_states.pow(2).mean(-1, keepdim=True)
    return module.weight * (hidden_states * torch.rsqrt(variance + module.variance_epsilon))
