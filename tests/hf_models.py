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
  for the parity tests' 1e-10;
* the parity tests' common ground: :data:`PARITY_TEXTS` and the bounds :data:`EXACT`,
  :data:`SHIPPED`, :data:`MATTERS`; :func:`every_layer`, :func:`shipped_layers` and
  :func:`lifted_layers` (every layer of both texts, as shipped or lifted to float64);
  :func:`head_error` and :func:`recompute_errors` (the distances to the model);
  :func:`replaced` and :func:`without` (a scenario's list of steps with one kind changed).
"""

from __future__ import annotations

import dataclasses
import types
from pathlib import Path
from typing import NamedTuple

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
    * Qwen 3's and OLMo 2's q_norm / k_norm compute their RMSNorm without the cast to float32;
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
            if type(module).__name__ in ("Qwen3Attention", "Olmo2Attention"):
                self._patch(module.q_norm, _rms_norm64)
                self._patch(module.k_norm, _rms_norm64)
            kind = type(module).__name__
            if kind == "GPTNeoSelfAttention":
                self._patch_attr(module, "_attn", types.MethodType(_gpt_neo_attn64, module))
            if kind == "GPTJRotaryEmbedding":
                self._patch_attr(module, "embed_positions", _gptj_table64(module))
            if kind == "ModernBertRotaryEmbedding":
                if self.freqs:
                    self._modernbert_freqs(module)
                self._patch(module, _modernbert_rotary64)
        if type(self.model).__module__.startswith("transformers.models.gptj."):
            from transformers.models.gptj import modeling_gptj
            self._patch_attr(modeling_gptj, "eager_attention_forward", _gptj_eager64)
        if type(self.model).__module__.startswith("transformers.models.modernbert."):
            from transformers.models.modernbert import modeling_modernbert
            self._patch_attr(modeling_modernbert, "apply_rotary_pos_emb",
                             _modernbert_apply_rotary64)
        return self

    def __exit__(self, *exc):
        for undo in reversed(self.undo):
            undo()

    def _patch(self, module, forward) -> None:
        module.forward = types.MethodType(forward, module)
        self.undo.append(lambda: delattr(module, "forward"))

    def _patch_attr(self, owner, name: str, value) -> None:
        saved = getattr(owner, name)
        setattr(owner, name, value)
        self.undo.append(lambda: setattr(owner, name, saved))

    def _modernbert_freqs(self, module) -> None:
        import numpy as np
        import torch

        for kind in module.layer_types:
            name = f"{kind}_inv_freq"
            d = 2 * getattr(module, name).numel()
            base = self.model.config.rope_parameters[kind]["rope_theta"]
            self._patch_attr(module, name, torch.tensor(base ** (-np.arange(0, d, 2) / d),
                                                        dtype=torch.float64))

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


def more_parity_configs() -> dict:
    """name -> (config, BERT-style tokenizer, has a pad token) for the parity tests of the
    architectures whose heads open with the dashboard's variants, each with the feature that
    sets it apart switched on where it shows (weights drawn with std PARITY_INIT, as in
    :func:`parity_configs`):

    * encoders like BERT: RoBERTa, XLM-RoBERTa, ELECTRA (an embedding projection), DistilBERT
      (q_lin ... out_lin), ALBERT (three layers sharing one attention module), ModernBERT
      (fused Wqkv, RoPE with a base per layer type, a local layer whose symmetric window,
      |i − j| <= 2, is shorter than the text);
    * GPT-Neo (no 1/√d_k; a local layer of window 3), GPT-J (interleaved RoPE on 4 of 8
      dimensions), GPT-NeoX (query_key_value fused per head, RoPE on half of each head,
      biases), OPT (biases, q scaled before the product);
    * Falcon in its three fused layouts: the new decoder architecture (groups, RoPE, GQA),
      multi-query (RoPE) and ALiBi per head (8 heads of width 4: head 6's slope on the
      scaled scores, bf16(2^-7)/√4, is 2^-8);
    * BLOOM (fused per head, ALiBi; 8 heads: head 7's slope is 2^-8);
    * the Llama family: Mixtral (window 3, experts), Gemma (multi-query), Phi (partial
      rotary, biases, dense), Phi-3 (fused qkv_proj, window 3), StableLM (partial rotary,
      q/k/v biases), StarCoder2 (window 3, biases).
    """
    from transformers import (
        AlbertConfig,
        BloomConfig,
        DistilBertConfig,
        ElectraConfig,
        FalconConfig,
        GemmaConfig,
        GPTJConfig,
        GPTNeoConfig,
        GPTNeoXConfig,
        MixtralConfig,
        ModernBertConfig,
        OPTConfig,
        Phi3Config,
        PhiConfig,
        RobertaConfig,
        StableLmConfig,
        Starcoder2Config,
        XLMRobertaConfig,
    )

    small = SMALL | {"initializer_range": PARITY_INIT}
    ids = dict(pad_token_id=0, bos_token_id=2, eos_token_id=3)
    wide = small | {"hidden_size": 32, "intermediate_size": 64}  # heads of width 8
    partial = {"rope_type": "default", "rope_theta": 10000.0, "partial_rotary_factor": 0.5}
    falcon = dict(hidden_size=16, num_hidden_layers=2, num_attention_heads=4,
                  vocab_size=len(VOCAB), initializer_range=PARITY_INIT, bias=True,
                  max_position_embeddings=64, **ids)
    return {
        "roberta": (RobertaConfig(**small, pad_token_id=0), True, True),
        "xlm_roberta": (XLMRobertaConfig(**small, pad_token_id=0), True, True),
        "electra": (ElectraConfig(**small, embedding_size=8), True, True),
        "distilbert": (DistilBertConfig(dim=16, n_layers=2, n_heads=4, hidden_dim=32,
                                        vocab_size=len(VOCAB), max_position_embeddings=64,
                                        initializer_range=PARITY_INIT, pad_token_id=0),
                       True, True),
        "albert": (AlbertConfig(**small | {"num_hidden_layers": 3}, embedding_size=8,
                                num_hidden_groups=1, inner_group_num=1, pad_token_id=0),
                   True, True),
        "modernbert": (ModernBertConfig(**small | {"num_hidden_layers": 3}, local_attention=4,
                                        layer_types=["full_attention", "sliding_attention",
                                                     "full_attention"],
                                        rope_parameters={
                                            "full_attention": {"rope_type": "default",
                                                               "rope_theta": 160000.0},
                                            "sliding_attention": {"rope_type": "default",
                                                                  "rope_theta": 10000.0}},
                                        attention_bias=True, cls_token_id=2, sep_token_id=3,
                                        **ids),
                       True, True),
        "gpt_neo": (GPTNeoConfig(hidden_size=16, num_layers=2, num_heads=4,
                                 attention_types=[[["local", "global"], 1]], window_size=3,
                                 vocab_size=len(VOCAB), max_position_embeddings=64,
                                 initializer_range=PARITY_INIT, intermediate_size=32, **ids),
                    False, True),
        "gptj": (GPTJConfig(n_embd=32, n_layer=2, n_head=4, rotary_dim=4, n_positions=64,
                            vocab_size=len(VOCAB), initializer_range=PARITY_INIT, **ids),
                 False, True),
        "gpt_neox": (GPTNeoXConfig(**wide, rope_parameters=partial, attention_bias=True, **ids),
                     False, True),
        "opt": (OPTConfig(hidden_size=16, num_hidden_layers=2, num_attention_heads=4, ffn_dim=32,
                          word_embed_proj_dim=16, max_position_embeddings=64,
                          vocab_size=len(VOCAB), init_std=PARITY_INIT, **ids), False, True),
        "falcon_new": (FalconConfig(**falcon, new_decoder_architecture=True, num_kv_heads=2),
                       False, True),
        "falcon_mqa": (FalconConfig(**falcon, new_decoder_architecture=False, multi_query=True,
                                    parallel_attn=True), False, True),
        "falcon_alibi": (FalconConfig(**falcon | {"hidden_size": 32, "num_attention_heads": 8},
                                      new_decoder_architecture=False, multi_query=False,
                                      parallel_attn=False, alibi=True), False, True),
        "bloom": (BloomConfig(hidden_size=32, n_layer=2, n_head=8, vocab_size=len(VOCAB),
                              initializer_range=PARITY_INIT, **ids), False, True),
        "mixtral": (MixtralConfig(**small, num_key_value_heads=2, sliding_window=3,
                                  num_local_experts=2, num_experts_per_tok=1, **ids),
                    False, True),
        "gemma": (GemmaConfig(**small, num_key_value_heads=1, head_dim=4, **ids), False, True),
        "phi": (PhiConfig(**small, rope_parameters=partial, **ids), False, True),
        "phi3": (Phi3Config(**small, num_key_value_heads=2, sliding_window=3, **ids),
                 False, True),
        "stablelm": (StableLmConfig(**small, num_key_value_heads=2, use_qkv_bias=True,
                                    rope_parameters=partial, **ids), False, True),
        "starcoder2": (Starcoder2Config(**small, num_key_value_heads=2, sliding_window=3,
                                        use_bias=True, **ids), False, True),
    }


def refused_configs() -> dict:
    """name -> (config, BERT-style tokenizer, has a pad token): architectures whose heads no
    variant of the dashboard computes exactly (Gemma 3 with its vision tower) and
    encoder–decoders, read a stack at a time."""
    from transformers import (
        BartConfig,
        Gemma3TextConfig,
        T5Config,
    )

    ids = dict(pad_token_id=0, bos_token_id=2, eos_token_id=3)
    return {
        "gemma3": (Gemma3TextConfig(**SMALL, num_key_value_heads=2, head_dim=4, **ids),
                   False, True),
        "t5": (T5Config(vocab_size=len(VOCAB), d_model=16, d_kv=4, d_ff=32, num_layers=2,
                        num_heads=4, pad_token_id=0, eos_token_id=3, decoder_start_token_id=0),
               False, True),
        "bart": (BartConfig(vocab_size=len(VOCAB), d_model=16, encoder_layers=2,
                            decoder_layers=2, encoder_attention_heads=4,
                            decoder_attention_heads=4, encoder_ffn_dim=32, decoder_ffn_dim=32,
                            max_position_embeddings=64, **ids), False, True),
    }


def _gpt_neo_attn64(module, query, key, value, attention_mask=None):
    """GPTNeoSelfAttention._attn without its cast of q and k to float32."""
    import torch

    weights = torch.matmul(query, key.transpose(-1, -2))
    t_q, t_k = query.size(-2), key.size(-2)
    causal = module.bias[:, :, t_k - t_q:t_k, :t_k]
    weights = torch.where(causal, weights, torch.tensor(torch.finfo(weights.dtype).min,
                                                        dtype=weights.dtype))
    if attention_mask is not None:
        weights = weights + attention_mask
    weights = torch.nn.functional.softmax(weights, dim=-1).to(value.dtype)
    return torch.matmul(weights, value), weights


def _gptj_table64(module):
    """GPT-J's sin/cos table (create_sinusoidal_positions) computed in float64."""
    import torch

    dim = module.pos_embd_dim
    inv_freq = 1.0 / (10000 ** (torch.arange(0, dim, 2, dtype=torch.float64) / dim))
    angles = torch.arange(module.max_positions, dtype=torch.float64)[:, None] * inv_freq
    return torch.cat((torch.sin(angles), torch.cos(angles)), dim=1)


def _gptj_eager64(module, query, key, value, attention_mask, scaling, dropout=0.0, **kwargs):
    """GPT-J's eager attention without its cast of q and k to float32."""
    import torch

    weights = torch.matmul(query, key.transpose(2, 3)) * scaling
    if attention_mask is not None:
        weights = weights + attention_mask
    weights = torch.nn.functional.softmax(weights, dim=-1).to(value.dtype)
    return torch.matmul(weights, value).transpose(1, 2).contiguous(), weights


def _modernbert_rotary64(module, x, position_ids, layer_type):
    """ModernBertRotaryEmbedding.forward with float64 in place of float32."""
    import torch

    inv_freq = getattr(module, f"{layer_type}_inv_freq").double()
    scaling = getattr(module, f"{layer_type}_attention_scaling")
    freqs = position_ids[..., None].double() * inv_freq
    emb = torch.cat((freqs, freqs), dim=-1)
    return (emb.cos() * scaling).to(dtype=x.dtype), (emb.sin() * scaling).to(dtype=x.dtype)


def _modernbert_apply_rotary64(q, k, cos, sin, unsqueeze_dim=1):
    """ModernBERT's apply_rotary_pos_emb without its cast of q and k to float32."""
    import torch

    def half(x):
        x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
        return torch.cat((-x2, x1), dim=-1)

    cos, sin = cos.unsqueeze(unsqueeze_dim), sin.unsqueeze(unsqueeze_dim)
    return q * cos + half(q) * sin, k * cos + half(k) * sin


def seq2seq_configs() -> dict:
    """name -> (config, BERT-style tokenizer, has a pad token) of the encoder–decoder models
    (capture_seq2seq, seq2seq_layer_inputs, the cross-attention's heads): T5 (no biases, scale
    1, a relative position bias in the self-attention, 8 buckets), BART (projection biases
    drawn by save_model's bias_std, scale 1/√head_dim), mBART (BART with pre-LayerNorm) and
    MarianMT (sinusoidal positions), 2 + 2 layers of 4 heads, weights large enough for peaked
    attention."""
    from transformers import BartConfig, MarianConfig, MBartConfig, T5Config

    ids = dict(pad_token_id=0, bos_token_id=2, eos_token_id=3)
    return {
        "t5": (T5Config(vocab_size=len(VOCAB), d_model=16, d_kv=4, d_ff=32, num_layers=2,
                        num_heads=4, relative_attention_num_buckets=8, initializer_factor=2.0,
                        pad_token_id=0, eos_token_id=3, decoder_start_token_id=0),
               False, True),
        "bart": (BartConfig(vocab_size=len(VOCAB), d_model=16, encoder_layers=2,
                            decoder_layers=2, encoder_attention_heads=4,
                            decoder_attention_heads=4, encoder_ffn_dim=32, decoder_ffn_dim=32,
                            max_position_embeddings=64, init_std=PARITY_INIT, **ids),
                 False, True),
        "mbart": (MBartConfig(vocab_size=len(VOCAB), d_model=16, encoder_layers=2,
                              decoder_layers=2, encoder_attention_heads=4,
                              decoder_attention_heads=4, encoder_ffn_dim=32,
                              decoder_ffn_dim=32, max_position_embeddings=64,
                              init_std=PARITY_INIT, decoder_start_token_id=3, **ids),
                  False, True),
        "marian": (MarianConfig(vocab_size=len(VOCAB), d_model=16, encoder_layers=2,
                                decoder_layers=2, encoder_attention_heads=4,
                                decoder_attention_heads=4, encoder_ffn_dim=32,
                                decoder_ffn_dim=32, max_position_embeddings=64,
                                init_std=PARITY_INIT, decoder_start_token_id=0, **ids),
                   False, True),
    }


# ---------------------------------------------------------------------------------------------
# The parity tests' common ground
# ---------------------------------------------------------------------------------------------

PARITY_TEXTS = ["the cat sat on a mat and then the dog ran far away", "a dog ran in sun"]
EXACT = 1e-10  # float64 with the lift
SHIPPED = 1e-5  # float32, as load_model gives it
MATTERS = 1e-3  # a dropped or altered feature moves the probabilities by more


def every_layer(model, tokenizer, texts=PARITY_TEXTS) -> list:
    """``layer_inputs`` of every layer for each text (the second of PARITY_TEXTS padded on the
    right), layer by layer."""
    from attnviz.io.hf_layers import layer_inputs

    return [layer_inputs(model, tokenizer, texts, layer, sequence=b)
            for layer in range(model.config.num_hidden_layers) for b in range(len(texts))]


def shipped_layers(folder) -> list:
    """:func:`every_layer` of the model in ``folder`` as load_model gives it (float32)."""
    from attnviz.io.capture import load_model

    return every_layer(*load_model(folder))


class Lifted(NamedTuple):
    layers: list
    lift: Float64Lift
    model: object
    tokenizer: object


def lifted_layers(folder, lift=Float64Lift, *, eager_experts: bool = False,
                  **options) -> Lifted:
    """:func:`every_layer` of the model in ``folder`` run in float64 within ``lift`` (a
    :class:`Float64Lift` or a subclass, given ``options``), with the lift and the float64
    model and its tokenizer. ``eager_experts``: the model's experts run eagerly (the default
    grouped_mm experts take no float64)."""
    from attnviz.io.capture import load_model

    model, tokenizer = load_model(folder)
    if eager_experts:
        model.set_experts_implementation("eager")
    model = model.double()
    with lift(model, **options) as lifted:
        return Lifted(every_layer(model, tokenizer), lifted, model, tokenizer)


def head_error(li, head: int, sc=None) -> float:
    """Largest |scenario − model| of one head's probabilities over the real tokens; ``sc`` is
    the head's scenario (by default as layer_scenario opens it)."""
    import numpy as np

    from attnviz.scenarios.from_model import layer_scenario
    from attnviz.scenarios.scenario import run_scenario

    sc = layer_scenario(li, head) if sc is None else sc
    weights = np.asarray(run_scenario(sc).attention.weights)
    keep = li.padding
    return float(np.abs(weights - li.model_weights[head])[keep][:, keep].max())


def recompute_errors(li) -> tuple[float, float]:
    """Largest |recompute − model| of every head's probabilities and of the block's output,
    over the real tokens."""
    import numpy as np

    from attnviz.io.hf_layers import recompute

    result = recompute(li)
    keep = li.padding
    w = np.abs(np.asarray(result.weights) - li.model_weights)[:, keep][:, :, keep].max()
    o = np.abs(np.asarray(result.output) - li.model_output)[keep].max()
    return float(w), float(o)


def replaced(kind, alter):
    """scenario -> the scenario with each step of type ``kind`` in its list replaced by
    ``alter(step)`` (dropped where that is None)."""
    def change(sc):
        listed = (alter(s) if isinstance(s, kind) else s for s in sc.params["steps"])
        return dataclasses.replace(sc, params={"steps": tuple(s for s in listed
                                                             if s is not None)})
    return change


def without(kind):
    """scenario -> the scenario without the steps of type ``kind`` in its list."""
    return replaced(kind, lambda s: None)
