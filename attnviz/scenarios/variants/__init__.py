"""The attention variants, one module each (or one per family).

Each module defines ``VARIANT`` (a :class:`~attnviz.scenarios.variant.Variant`) or ``VARIANTS``
(a tuple of them); :mod:`attnviz.scenarios.registry` imports every module of this package and
collects them, so adding a variant is adding a module here (and its tests).
"""
