"""What a model's config.json asks for, judged by arithmetic on the plain JSON before torch
builds anything.

transformers builds whatever sizes a config.json states. Even on torch's meta device (no
memory) a model costs ~3 ms of work a layer to build, so a config with 1,000,000 layers would
hold a server thread for most of an hour before anything could count its parameters; and some
architectures keep buffers that no parameter count sees (GPT-Neo's causal mask is
``max_position_embeddings²`` bytes in every layer). Two checks come first, in microseconds:

1. :func:`check_fields` — every size a config states (at the top and in its sub-configs,
   ``text_config``, ``encoder``, ...) is a whole number in a sane range, or null where
   transformers then picks its own default; otherwise a sentence naming the field.
2. :func:`estimate_bytes` — a lower bound of the bytes of the float32 parameters and the
   buffers those sizes imply. The causal masks of the architectures in :data:`CAUSAL_MASKS`
   are counted exactly. The rest is a standard transformer's count — per layer the attention's
   query, key, value and output projections and the feed-forward's two matrices (the smaller of
   the dense width and all experts together for a mixture of experts), the token embedding
   table, the position table where the architecture has a learned one — divided by
   :data:`MARGIN`: some architectures' layers are lighter than a standard one (Swin's stages,
   SqueezeBERT's grouped projections, state-space layers, blocks shared between layers), by at
   most 2.5× over the default configs of transformers 5.25's 579 base models. A model the
   estimate refuses is surely too large; the exact count
   (``attnviz.io.capture.model_bytes``, on the meta device) comes after, and is cheap once the
   layers are bounded.

numpy-free and torch-free: plain Python on the dict ``json.load`` gives.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

GIB = 1024**3

# Each size field a config may state, by role, with its sane range. A field may also be null
# (transformers' default then applies, and the full config is checked again), a list of
# per-layer values or a dict of per-part values (LXMERT's layers), each in the range; a whole
# number written as a float (1200.0) counts as that number.
LAYER_FIELDS = ("n_layer", "num_hidden_layers", "num_layers", "n_layers", "encoder_layers",
                "num_encoder_layers")
DECODER_LAYER_FIELDS = ("decoder_layers", "num_decoder_layers")
HIDDEN_FIELDS = ("hidden_size", "n_embd", "d_model", "n_embed", "embed_dim", "dim")
EMBEDDING_FIELDS = ("embedding_size", "word_embed_proj_dim")
FFN_FIELDS = ("intermediate_size", "n_inner", "d_ff", "ffn_dim", "encoder_ffn_dim",
              "decoder_ffn_dim", "hidden_dim")
EXPERT_FFN_FIELDS = ("moe_intermediate_size", "expert_intermediate_size",
                     "shared_expert_intermediate_size")
HEAD_FIELDS = ("num_attention_heads", "n_head", "num_heads", "n_heads",
               "encoder_attention_heads", "decoder_attention_heads")
KV_HEAD_FIELDS = ("num_key_value_heads", "n_head_kv", "num_kv_heads", "multi_query_group_num")
HEAD_DIM_FIELDS = ("head_dim", "d_kv", "kv_channels", "qk_nope_head_dim", "qk_rope_head_dim",
                   "v_head_dim", "kv_lora_rank", "q_lora_rank")
VOCAB_FIELDS = ("vocab_size", "n_vocab", "padded_vocab_size")
TYPE_VOCAB_FIELDS = ("type_vocab_size",)
POSITION_FIELDS = ("max_position_embeddings", "n_positions", "n_ctx", "max_seq_len",
                   "seq_length", "max_sequence_length", "max_source_positions",
                   "max_target_positions")
EXPERT_FIELDS = ("num_experts", "num_local_experts", "n_routed_experts", "moe_num_experts",
                 "n_shared_experts", "num_shared_experts", "num_experts_per_tok")
GROUP_FIELDS = ("num_hidden_groups", "inner_group_num")

MAX_LAYERS = 256  # a stack's layers: building costs ~3 ms a layer even on the meta device
MAX_WIDTH = 2**16  # hidden and embedding sizes, and a head's size
MAX_FFN = 2**20  # a feed-forward's width
MAX_HEADS = 4096
MAX_VOCAB = 2**23
MAX_POSITIONS = 2**24
MAX_EXPERTS = 2**17  # Doge's experts are 16,384 rows of one table
MAX_LIST = 4096  # entries of a per-layer list of sizes

# field -> (smallest, largest): layer and expert counts may be 0 (no decoder, a dense model)
RANGES: dict[str, tuple[int, int]] = {
    **{f: (0, MAX_LAYERS) for f in LAYER_FIELDS + DECODER_LAYER_FIELDS + GROUP_FIELDS},
    **{f: (1, MAX_WIDTH) for f in HIDDEN_FIELDS + EMBEDDING_FIELDS},
    **{f: (0, MAX_WIDTH) for f in HEAD_DIM_FIELDS},  # 0: no such part (no rotary half)
    **{f: (1, MAX_FFN) for f in FFN_FIELDS + EXPERT_FFN_FIELDS},
    **{f: (1, MAX_HEADS) for f in HEAD_FIELDS + KV_HEAD_FIELDS},
    **{f: (1, MAX_VOCAB) for f in VOCAB_FIELDS},
    **{f: (0, MAX_VOCAB) for f in TYPE_VOCAB_FIELDS},
    **{f: (1, MAX_POSITIONS) for f in POSITION_FIELDS},
    **{f: (0, MAX_EXPERTS) for f in EXPERT_FIELDS},
}
MAX_DEPTH = 4  # sub-configs inside sub-configs, as deep as transformers nests them
MARGIN = 3  # a standard transformer's count over the lightest architecture's (2.5 at most)

# model_type -> (bytes an element, once per layer): architectures that keep a causal mask of
# max_position_embeddings² elements as a buffer (transformers' modeling files)
CAUSAL_MASKS: dict[str, tuple[int, bool]] = {
    "gpt_neo": (1, True),
    "imagegpt": (1, True),
    "openai-gpt": (4, True),
    "gpt_bigcode": (1, False),
}
# architectures with a learned table of max_position_embeddings rows (besides those whose
# config says position_embedding_type "absolute", the BERT family)
POSITION_TABLES = frozenset({"gpt2", "gpt_neo", "gpt_bigcode", "imagegpt", "openai-gpt", "opt",
                             "distilbert", "biogpt", "bart", "mbart", "whisper"})


@dataclass(frozen=True)
class Estimate:
    """A lower bound of a model's bytes in float32, and the part that weighs most.

    Attributes
    ----------
    n_bytes : int
        Parameters (4 bytes each) and the buffers counted.
    largest : str
        The heaviest part in words, e.g. "4 layers' causal masks (30,000² bytes each)".
    largest_bytes : int
    """

    n_bytes: int
    largest: str
    largest_bytes: int


def shown_value(value: Any, limit: int = 40) -> str:
    """A config value as the file writes it (JSON), cut to ``limit`` characters."""
    try:
        text = json.dumps(value)
    except (TypeError, ValueError):
        text = type(value).__name__
    return text if len(text) <= limit else text[:limit - 1] + "…"


def check_fields(config: dict, where: str = "") -> None:
    """Refuse a size field that is not a whole number in its range, naming the field.

    Parameters
    ----------
    config : dict
        A config.json as ``json.load`` reads it (or a config's ``to_dict()``).
    where : str
        The path of a sub-config, for the message ("text_config.").

    Raises
    ------
    ValueError
        e.g. "the config.json says n_embd = -32; it must be a whole number from 1 to 65,536".
    """
    for name, value in config.items():
        if name in RANGES and value is not None:
            values = _values(value)
            lo, hi = RANGES[name]
            if not 0 < len(values) <= MAX_LIST or not all(_whole(v) and lo <= v <= hi
                                                          for v in values):
                each = "each a whole number" if isinstance(value, (list, dict)) else \
                    "a whole number"
                raise ValueError(f"the config.json says {where}{name} = {shown_value(value)}; it "
                                 f"must be {each} from {lo} to {hi:,}")
        elif _is_sub_config(name, value) and where.count(".") < MAX_DEPTH:
            check_fields(value, f"{where}{name}.")


def _values(value: Any) -> list:
    """The numbers a field states: itself, a list's entries or a dict's values."""
    if isinstance(value, list):
        return value
    if isinstance(value, dict):
        return list(value.values())
    return [value]


def _whole(v: Any) -> bool:
    """An int (not a bool), or a float holding a whole number (json writes 1200.0)."""
    return (type(v) is int) or (type(v) is float and v.is_integer())


def _is_sub_config(name: str, value: Any) -> bool:
    """A nested config transformers builds a model part from (text_config, encoder, ...)."""
    return isinstance(value, dict) and (name.endswith("config") or name in ("encoder",
                                                                             "decoder"))


def estimate_bytes(config: dict) -> Estimate:
    """A lower bound of a model's float32 parameters and buffers, from its stated sizes.

    Parameters
    ----------
    config : dict
        A config whose fields passed :func:`check_fields`.

    Returns
    -------
    Estimate
        The sum over the config and its sub-configs.
    """
    parts = [(what, n if exact else n // MARGIN) for what, n, exact in _parts(config, MAX_DEPTH)]
    total = sum(n for _, n in parts)
    largest, largest_bytes = max(parts, key=lambda p: p[1], default=("nothing", 0))
    return Estimate(n_bytes=total, largest=largest, largest_bytes=largest_bytes)


def _parts(config: dict, depth: int) -> list[tuple[str, int, bool]]:
    """(what, bytes, counted exactly) of each part, this config's and its sub-configs'."""
    parts = _stack_parts(config)
    if depth > 0:
        for name, value in config.items():
            if _is_sub_config(name, value):
                parts += [(f"{name}: {what}", n, exact)
                          for what, n, exact in _parts(value, depth - 1)]
    return parts


def _stack_parts(c: dict) -> list[tuple[str, int, bool]]:
    """The parts of one config's own stack of layers (none without a hidden size)."""
    h = _first(c, HIDDEN_FIELDS)
    if not h:
        return []
    heads = _first(c, HEAD_FIELDS)
    head_dim = _first(c, HEAD_DIM_FIELDS[:3]) or (h // heads if heads else 0)
    kv_heads = 1 if c.get("multi_query") is True else (_first(c, KV_HEAD_FIELDS) or heads)
    attention = 2 * h * heads * head_dim  # query and output projections
    if not c.get("kv_lora_rank"):  # low-rank key-value projections count below this
        attention += 2 * h * kv_heads * head_dim
    ffn = _first(c, FFN_FIELDS) or 4 * h
    experts = _first(c, EXPERT_FIELDS[:4])
    if experts > 1:  # a mixture of experts; some layers may stay dense
        ffn = min(ffn, experts * (_first(c, EXPERT_FFN_FIELDS[:2]) or ffn))
    layers = _first(c, LAYER_FIELDS)
    if c.get("is_encoder_decoder") is True:
        layers += _first(c, DECODER_LAYER_FIELDS)
    if _first(c, GROUP_FIELDS[:1]):  # ALBERT: the layers of a group share their weights
        layers = _first(c, GROUP_FIELDS[:1]) * max(1, _first(c, GROUP_FIELDS[1:]))
    width = _first(c, EMBEDDING_FIELDS) or h
    vocab = _first(c, VOCAB_FIELDS)
    positions = _first(c, POSITION_FIELDS)
    model_type = c.get("model_type")
    parts = [(f"{layers} layers of width {h:,}", 4 * layers * (attention + 2 * h * ffn), False),
             (f"the embedding of {vocab:,} tokens",
              4 * width * (vocab + _first(c, TYPE_VOCAB_FIELDS)), False)]
    if model_type in POSITION_TABLES or c.get("position_embedding_type") == "absolute":
        parts.append((f"the table of {positions:,} positions", 4 * width * positions, False))
    if model_type in CAUSAL_MASKS:
        size, per_layer = CAUSAL_MASKS[model_type]
        masks = layers if per_layer else 1
        parts.append((f"{masks} causal mask{'s' * (masks != 1)} of {positions:,}² "
                      f"{'bytes' if size == 1 else 'floats'}", masks * size * positions**2,
                      True))
    return parts


def _first(c: dict, names: tuple[str, ...]) -> int:
    """The first of these fields the config states above 0 (the smallest entry of a list or
    dict), else 0."""
    for name in names:
        values = _values(c.get(name))
        if values and all(_whole(v) for v in values) and min(values) > 0:
            return int(min(values))
    return 0
