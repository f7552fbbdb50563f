"""One BLAS thread per server process.

The dashboard multiplies small matrices (at most 256 tokens), one script thread per session,
many sessions at once. A multi-threaded BLAS then spins threads that fight the sessions (and
each other) for the cores: on this 2-core machine, busy with other work, ``run_scenario`` at
the dashboard's limits took 168–558 ms with the default two BLAS threads and 30–36 ms with one
(benchmarks/RESULTS.md, core section). The core itself stays plain: the limit is set here, for
the server process only, with threadpoolctl (notebooks keep numpy's default).
"""

from __future__ import annotations

import functools

from threadpoolctl import threadpool_limits


@functools.cache
def one_blas_thread() -> None:
    """Limit every BLAS library loaded in this process to one thread (once per process)."""
    threadpool_limits(limits=1, user_api="blas")
