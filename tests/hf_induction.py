"""A tiny Hugging Face GPT-2 trained on the induction task in a test, until its induction head
forms; saved with ``save_pretrained`` beside a locally built tokenizer, the folder a user would
load (nothing downloaded).

Import this only after ``pytest.importorskip("transformers")`` (torch and transformers are
imported inside).

The model: GPT-2, 2 layers × :data:`HEADS` heads, width 32, its MLPs zeroed and frozen
(attention-only, as Olsson et al.'s small models), embeddings drawn from N(0, 1), untied
unembedding, positions for the first token and :data:`TOKENS` more. The data: attnviz's own
induction task (:func:`attnviz.scenarios.induction.make_batch`: random tokens with a
segment of 4..12 repeated at a random place and gap, the loss on the repeat), after a first
token. Adam, seeded (torch and numpy): the same seed gives the same model.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

SPECIALS = ["[PAD]", "[UNK]", "[BOS]", "[EOS]"]
BOS, EOS = 2, 3
N_WORDS = 16  # the task's vocabulary
VOCAB = {w: i for i, w in enumerate(SPECIALS + [f"w{i}" for i in range(N_WORDS)])}
TOKENS = 32  # the task's sequence length (the first token comes on top)
HEADS = 4
WIDTH = 32
STEPS = 700
LR = 1e-2
BATCH = 64
INIT = 0.1  # initializer_range: GPT-2's 0.02 learns this task far slower
SEED = 0


@dataclass
class Trained:
    """The trained language model (with its head, for losses) and what it was trained on."""

    model: object  # transformers.GPT2LMHeadModel
    losses: list[float]
    cpu_seconds: float


def settings(seed: int = SEED):
    from attnviz.scenarios.induction import InductionSettings

    return InductionSettings(vocab_size=N_WORDS, n_tokens=TOKENS, min_segment=4,
                             max_segment=12, batch=BATCH, seed=seed)


def task_batch(step: int, seed: int = SEED):
    """(input_ids, mask) of one training step: the task's batch after the first token, word
    w<i> = id i + len(SPECIALS); mask 1 at the tokens whose prediction the loss counts."""
    import torch

    from attnviz.scenarios.induction import make_batch

    b = make_batch(settings(seed), np.random.default_rng([seed, step]))
    ids = np.concatenate([np.full((len(b.tokens), 1), BOS), b.tokens + len(SPECIALS)], axis=1)
    # the mask per predicted token: the task's position i predicts its token i + 1, which
    # sits at i + 2 after the first token
    mask = np.concatenate([np.zeros((len(b.tokens), 2), bool), b.loss_mask], axis=1)
    return torch.tensor(ids), torch.tensor(mask, dtype=torch.float32)


def config(heads: int = HEADS):
    from transformers import GPT2Config

    return GPT2Config(n_embd=WIDTH, n_layer=2, n_head=heads, n_inner=WIDTH,
                      vocab_size=len(VOCAB), n_positions=TOKENS + 1, resid_pdrop=0.0,
                      embd_pdrop=0.0, attn_pdrop=0.0, bos_token_id=BOS, eos_token_id=EOS,
                      initializer_range=INIT, tie_word_embeddings=False)


def loss(model, ids, mask, zero=()):
    """Mean next-token loss over the tokens where ``mask`` (the shape of ``ids``) is 1, with the
    heads ``zero`` ((layer, head), ...) zeroed: their slices of the attention output
    projection's input."""
    import torch

    d = model.config.n_embd // model.config.n_head
    hooks = []
    for layer in {layer for layer, _ in zero}:
        heads = [head for lay, head in zero if lay == layer]

        def cut(module, args, heads=heads):
            z = args[0].clone()
            for head in heads:
                z[..., head * d:(head + 1) * d] = 0
            return (z,)

        hooks.append(model.transformer.h[layer].attn.c_proj.register_forward_pre_hook(cut))
    try:
        logits = model(ids).logits
    finally:
        for hook in hooks:
            hook.remove()
    logp = torch.log_softmax(logits[:, :-1], dim=-1).gather(-1, ids[:, 1:, None])[..., 0]
    m = mask[:, 1:]
    return -(logp * m).sum() / m.sum()


def train(seed: int = SEED, steps: int = STEPS, heads: int = HEADS) -> Trained:
    import time

    import torch
    from transformers import GPT2LMHeadModel

    clock = time.process_time()
    torch.manual_seed(seed)
    cfg = config(heads)
    cfg._attn_implementation = "eager"
    model = GPT2LMHeadModel(cfg)
    with torch.no_grad():
        # embeddings N(0, 1), as attnviz's own induction model draws them
        model.transformer.wte.weight.normal_(0.0, 1.0)
        model.transformer.wpe.weight.normal_(0.0, 1.0)
        for block in model.transformer.h:  # attention-only: every MLP adds 0, learns nothing
            block.mlp.c_proj.weight.zero_()
            block.mlp.c_proj.bias.zero_()
            for p in block.mlp.parameters():
                p.requires_grad_(False)
    opt = torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=LR)
    losses = []
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny matrices: threads cost more than they give
    try:
        for step in range(1, steps + 1):
            ids, mask = task_batch(step, seed)
            value = loss(model, ids, mask)
            opt.zero_grad()
            value.backward()
            opt.step()
            losses.append(float(value.detach()))
    finally:
        torch.set_num_threads(threads)
    model.train(False)
    return Trained(model, losses, time.process_time() - clock)


def make_tokenizer():
    """A word-level tokenizer over :data:`VOCAB` (GPT style: no [CLS]/[SEP] template)."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.WordLevel(VOCAB, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    return PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]", pad_token="[PAD]",
                                   bos_token="[BOS]", eos_token="[EOS]",
                                   model_input_names=["input_ids", "attention_mask"])


def save(trained: Trained, folder: Path) -> Path:
    """The model and its tokenizer, written with save_pretrained."""
    trained.model.save_pretrained(folder)
    make_tokenizer().save_pretrained(folder)
    return Path(folder)
