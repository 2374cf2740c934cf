"""Single-threaded BLAS/OpenMP pools for the engines' own calls (threadpoolctl).

The PLD engine's arrays are long 1-D vectors: numpy hands their dot products and norms to BLAS, which
OpenBLAS runs on its default thread pool (one thread per core). On a loaded machine waking that pool
costs more than the work (issue 26 measured the engine 2–3× slower under load), and a process pool of
``workers`` processes (``optcomp.sweep``) would oversubscribe the cores. :func:`single_threaded`
limits every BLAS/OpenMP pool loaded in the process to one thread for the duration of a query and
restores the caller's settings afterwards. The FFTs (``scipy.fft``) are single-threaded already.

The ``threadpoolctl`` controller (which enumerates the loaded libraries, ~0.5 ms) is built once, on the
first query; a BLAS library loaded later in the process is not limited. Limiting is a process-wide
setting: queries run concurrently in *threads* of one process share it (the last to finish restores).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

__all__ = ["call_single_threaded", "single_threaded"]

_T = TypeVar("_T")
_R = TypeVar("_R")

_CONTROLLER: list[Any] = []


def _controller() -> Any:
    """The process's cached ``threadpoolctl.ThreadpoolController`` (``None`` without threadpoolctl)."""
    if not _CONTROLLER:
        try:
            from threadpoolctl import ThreadpoolController
        except ImportError:  # pragma: no cover - threadpoolctl is a core dependency
            _CONTROLLER.append(None)
        else:
            _CONTROLLER.append(ThreadpoolController())
    return _CONTROLLER[0]


@contextlib.contextmanager
def single_threaded() -> Iterator[None]:
    """Run the body with every BLAS/OpenMP pool limited to one thread (restored on exit)."""
    ctl = _controller()
    if ctl is None:  # pragma: no cover - threadpoolctl is a core dependency
        yield
        return
    with ctl.limit(limits=1):
        yield


def call_single_threaded(fn: Callable[[_T], _R], arg: _T) -> _R:
    """``fn(arg)`` inside :func:`single_threaded`: what a sweep's pool worker or Dask worker runs (picklable)."""
    with single_threaded():
        return fn(arg)
