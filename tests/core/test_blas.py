"""attnviz.core.blas: OpenBLAS's thread count, set at run time."""

import numpy as np
import pytest

from attnviz.core.blas import blas_threads, set_blas_threads


def test_set_and_restore_threads():
    before = blas_threads()
    if before is None:  # numpy without OpenBLAS: the setter says it did nothing
        assert set_blas_threads(1) is False
        return
    try:
        assert set_blas_threads(1) is True
        assert blas_threads() == 1
        a = np.arange(1.0, 10.0).reshape(3, 3)
        np.testing.assert_array_equal(a @ np.eye(3), a)  # BLAS still computes
    finally:
        set_blas_threads(before)
    assert blas_threads() == before


def test_bad_count_raises():
    with pytest.raises(ValueError, match="at least 1"):
        set_blas_threads(0)
