"""Attention as an ordered list of small steps that compose (FlexAttention's score_mod and
mask_mod, attention-gym's zoo).

A head's attention is a list of steps, each one unit carrying its forward, its derivative, its
written formula piece and what Step by step / Trace show for it:

* head structure (:class:`Heads`: n_heads, n_kv_heads — MHA, GQA, MQA — and W_O);
* changes of q and k, in order (:class:`QKNorm` before positions as Qwen 3 and Gemma 3 do,
  :class:`QKNormAcross` — one norm over all heads together — as OLMo 2 does, or
  :class:`QKLayerNorm` as Phi and StableLM do; :class:`RoPE`);
* changes of the scores (:class:`Scale` with τ, :class:`ALiBi`, :class:`AddBias`,
  :class:`SSMax`, :class:`SoftCap`, :class:`Disentangled`: DeBERTa's content-to-position and
  position-to-content terms from q and k): each makes a :class:`~attnviz.core.score_mods.ScoreMod`,
  so the engine, the backward pass, the row explanation and Trace loop over them as they do
  over any result's ``score_mods``;
* mask parts (:class:`Causal`, :class:`Window`, :class:`Padding`, :class:`CustomMask`),
  combined by the one function :func:`attnviz.core.masks.combine`;
* a normaliser (:class:`Softmax`, :class:`SinkSoftmax`: a learned logit that joins each row's
  softmax and is dropped, gpt-oss).

:func:`run_head` runs a list for one head and returns every intermediate
(:class:`HeadTrace`); :func:`head_backward` is its backward pass; :func:`attend_steps` runs
every head of a layer through :func:`run_head` and returns the core's
:class:`~attnviz.core.attention.MultiHeadResult`. :func:`from_dicts` / :func:`to_dicts` read
and write a list as small dictionaries (files and links).

A new kind of step is one module of this package: every module is imported here, and a step
class registers itself by its ``name`` when it is defined (:data:`STEP_TYPES`), so a list, a
file or a link can name it without a line anywhere else.
"""

import importlib
import pkgutil

from attnviz.core.masks import combine
from attnviz.core.steps.base import (
    STEP_TYPES,
    HeadShape,
    MaskPart,
    Normaliser,
    QKStep,
    ScoreStep,
    Step,
    from_dicts,
    to_dicts,
)
from attnviz.core.steps.disentangled import Disentangled
from attnviz.core.steps.heads import Heads
from attnviz.core.steps.masks import Causal, CustomMask, Padding, Window
from attnviz.core.steps.normalisers import SinkSoftmax, Softmax
from attnviz.core.steps.positions import ALiBi, RoPE
from attnviz.core.steps.qk_norm import QKLayerNorm, QKNorm, QKNormAcross
from attnviz.core.steps.run import HeadGradients, HeadTrace, attend_steps, head_backward, run_head
from attnviz.core.steps.scores import AddBias, Scale, SoftCap, SSMax

for _module in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_module.name}")

__all__ = [
    "STEP_TYPES", "ALiBi", "AddBias", "Causal", "CustomMask", "Disentangled", "HeadGradients",
    "HeadShape",
    "HeadTrace", "Heads", "MaskPart", "Normaliser", "Padding", "QKLayerNorm", "QKNorm",
    "QKNormAcross", "QKStep",
    "RoPE", "SSMax", "Scale", "ScoreStep", "SinkSoftmax", "SoftCap", "Softmax", "Step", "Window",
    "attend_steps", "combine", "from_dicts", "head_backward", "run_head", "to_dicts",
]
