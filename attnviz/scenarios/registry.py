"""The variants the dashboard offers, collected from :mod:`attnviz.scenarios.variants`.

Every module of that package that defines ``VARIANT`` (or ``VARIANTS``) is imported once, here;
:data:`VARIANTS` maps each variant's key to it, in the order the picker shows them. Pages,
files, links and tests read :data:`VARIANTS` only.
"""

from __future__ import annotations

import importlib
import pkgutil
from types import MappingProxyType

from attnviz.scenarios import variants as _package
from attnviz.scenarios.variant import Preset, Variant


def collect() -> list[Variant]:
    """Every variant declared by a module of :mod:`attnviz.scenarios.variants`, by ``order``.

    Raises
    ------
    ValueError
        If two variants share a key (a programming error, caught by the tests).
    """
    found: list[Variant] = []
    for info in pkgutil.iter_modules(_package.__path__):
        module = importlib.import_module(f"{_package.__name__}.{info.name}")
        found.extend(getattr(module, "VARIANTS", ()))
        if hasattr(module, "VARIANT"):
            found.append(module.VARIANT)
    keys = [v.key for v in found]
    twice = sorted({k for k in keys if keys.count(k) > 1})
    if twice:
        raise ValueError(f"variant key(s) declared twice: {', '.join(twice)}")
    return sorted(found, key=lambda v: (v.order, v.key))


VARIANTS: MappingProxyType[str, Variant] = MappingProxyType({v.key: v for v in collect()})


def variant_presets() -> tuple[Preset, ...]:
    """The presets the variants declare, in the variants' order."""
    return tuple(p for v in VARIANTS.values() for p in v.presets)
