"""Every user-visible word of the dashboard, one namespace per page, to review and correct here.

A page imports its own namespace explicitly and, when it needs them, the shared strings::

    from attnviz.teach.text import common
    from attnviz.teach.text import masks as text

This package's ``__init__`` imports nothing, so ``import attnviz`` (and ``import attnviz.teach``)
loads no text module.

One name per page
-----------------
A page's file (its URL path), the prefix of its widget keys and its text namespace share one
name (``tests/teach/test_text.py`` reads this table and checks the pages against it):

============================= ======================== ======================= ====================
page file                     widget key prefix        text namespace          URL path
============================= ======================== ======================= ====================
pages/home.py                 ``home_``                ``home``                / (default page)
pages/playground.py           ``playground_``          ``playground``          /playground
pages/step_by_step.py         ``step_by_step_``        ``step_by_step``        /step_by_step
pages/masks.py                ``masks_``               ``masks``               /masks
pages/multi_head.py           ``multi_head_``          ``multi_head``          /multi_head
pages/positional_encoding.py  ``positional_encoding_`` ``positional_encoding`` /positional_encoding
pages/encoder_decoder.py      ``encoder_decoder_``     ``encoder_decoder``     /encoder_decoder
pages/inference.py            ``inference_``           ``inference``           /inference
pages/modern.py               ``modern_``              ``modern``              /modern
pages/trace.py                ``trace_``               ``trace``               /trace
pages/compare.py              ``compare_``             ``compare``             /compare
pages/pitfalls.py             ``pitfalls_``            ``pitfalls``            /pitfalls
pages/why_sqrt_dk.py          ``why_sqrt_dk_``         ``why_sqrt_dk``         /why_sqrt_dk
pages/gradients.py            ``gradients_``           ``gradients``           /gradients
pages/learn.py                ``learn_``               ``learn``               /learn
pages/induction.py            ``induction_``           ``induction``           /induction
pages/line_view.py            ``line_view_``           ``line_view``           /line_view
pages/quiz.py                 ``quiz_``                ``quiz``                /quiz
pages/your_attention.py       ``your_attention_``      ``your_attention``      /your_attention
pages/model_view.py           ``model_view_``          ``model_view``          /model_view
pages/generate.py             ``generate_``            ``generate``            /generate
pages/share.py                ``share_``               ``share``               /share
============================= ======================== ======================= ====================

:mod:`common` holds the strings several pages or the shared ``attnviz.ui`` helpers use
(matrix titles, axis titles, diagnostics, downloads, the sidebar, limits).

Conventions
-----------
* Formulas are LaTeX for ``st.latex`` (constants named ``*FORMULA*`` or tuples holding one);
  explanations are plain sentences (rendered as text, never as HTML).
* A template is a string with ``str.format`` fields. Every namespace declares its templates in a
  module-level ``FIELDS`` dict, ``{"CONSTANT": ("field", ...)}``, one entry per constant that
  holds fields (for a dict or tuple constant: the fields of all its strings), and a comment
  above the constant says what each field is. ``tests/teach/test_text.py`` formats every
  template with one value per field and fails when a template and its ``FIELDS`` entry disagree.
* Symbols follow the vocabulary of :mod:`attnviz` (``x``, ``q``, ``k``, ``v``, ``d_model``,
  ``d_k``, ``d_v``, ``n_heads``, ``t_q``, ``t_k``, scores, weights, output; ``W_Q``, ``W_K``,
  ``W_V``, ``W_O`` for the projections, α_ij for one weight).
"""
