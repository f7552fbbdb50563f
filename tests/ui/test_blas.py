"""The server process limits BLAS to one thread (attnviz/ui/blas.py); the core does not."""

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = """
import json
from threadpoolctl import threadpool_info
import attnviz

def blas_threads():
    return [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"]

before = blas_threads()
from attnviz.ui import blas
blas.one_blas_thread()
blas.one_blas_thread()  # once per process: a second call changes nothing
print(json.dumps([before, blas_threads()]))
"""


def test_one_blas_thread_in_the_server_process_only():
    """In a fresh process with two BLAS threads: importing attnviz leaves them alone, the app's
    call limits them to one."""
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "2", "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                         env=env, check=True, cwd=ROOT).stdout
    before, after = json.loads(out)
    assert before and before == [2] * len(before)
    assert after == [1] * len(after)
