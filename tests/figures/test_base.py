"""attnviz.figures.base.figure: the unvalidated construction (plotly.py's private
``_validate=False``) and its fallback to validated construction when a plotly.py release stops
taking it."""

from __future__ import annotations

import json
import logging

import numpy as np
import plotly.graph_objects as go
import pytest

from attnviz.figures import base, heatmap


@pytest.fixture
def fast_again(monkeypatch):
    """Each test starts with the unvalidated path on, whatever an earlier one switched off."""
    monkeypatch.setattr(base, "_FAST", [True])


class _Refusing(go.Figure):
    """A go.Figure from a plotly.py that no longer takes ``_validate``."""

    calls = 0

    def __init__(self, *args, **kwargs):
        if "_validate" in kwargs:
            raise TypeError("__init__() got an unexpected keyword argument '_validate'")
        type(self).calls += 1
        super().__init__(*args, **kwargs)


class _Ignoring(go.Figure):
    """A go.Figure that takes ``_validate`` but validates anyway (the flag stays True)."""

    def __init__(self, *args, _validate=True, **kwargs):
        super().__init__(*args, **kwargs)


def _json(fig) -> dict:
    """The figure as plotly.py sends it (numpy arrays as typed arrays: every bit compared)."""
    return json.loads(fig.to_json())


def _reference(monkeypatch):
    """The figure a heatmap builds through validated construction (tests compare with it)."""
    with monkeypatch.context() as m:
        m.setattr(base, "_VALIDATE", True)
        return heatmap(np.array([[0.25, -1.5], [np.inf, 2.0]]), ["a", "<b>"], ["c", "d"])


def test_this_plotly_takes_the_private_argument(fast_again, monkeypatch):
    """The fast path is the one in use here (tests/pages/test_speed.py checks that its figures
    equal the validated ones); callers' later updates are validated."""
    calls = []
    real = base.go.Figure

    def spy(*args, **kwargs):
        calls.append(kwargs.get("_validate", True))
        return real(*args, **kwargs)

    monkeypatch.setattr(base.go, "Figure", spy)
    fig = heatmap(np.array([[0.25, -1.5], [np.inf, 2.0]]), ["a", "<b>"], ["c", "d"])
    assert calls == [False] and base._FAST == [True]
    assert fig._validate is True  # a caller's later update is validated
    with pytest.raises(ValueError):
        fig.update_layout(not_a_plotly_property=1)


@pytest.mark.parametrize("figure_class", [_Refusing, _Ignoring])
def test_a_plotly_without_the_private_argument_falls_back_to_validation(
        fast_again, monkeypatch, caplog, figure_class):
    reference = _reference(monkeypatch)
    monkeypatch.setattr(base.go, "Figure", figure_class)
    with caplog.at_level(logging.WARNING, logger=base.__name__):
        fig = heatmap(np.array([[0.25, -1.5], [np.inf, 2.0]]), ["a", "<b>"], ["c", "d"])
    assert isinstance(fig, figure_class)
    assert _json(fig) == _json(reference)
    assert base._FAST == [False]  # validated from now on: the private call is not retried
    assert "figures are validated from now on" in caplog.text


def test_after_a_refusal_the_private_argument_is_not_tried_again(fast_again, monkeypatch):
    monkeypatch.setattr(base.go, "Figure", _Refusing)
    _Refusing.calls = 0
    heatmap(np.eye(2))
    heatmap(np.eye(3))
    assert _Refusing.calls == 2  # one validated construction each, no refused attempt
    assert base._FAST == [False]
