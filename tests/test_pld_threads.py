"""The PLD engine limits BLAS/OpenMP pools to one thread during a query and restores them (issue 26 item 5)."""

from __future__ import annotations

import threadpoolctl

from optcomp import Bound, compose
from optcomp.mechanisms import Gaussian, PoissonSubsampled
from optcomp.pld import _pld


class _Probe(_pld._Measure):
    """A measure that records the BLAS pools' thread counts while the engine runs it."""

    def __init__(self) -> None:
        self.seen: list[int] = []

    def run(self, dirs: tuple[object, ...]) -> Bound:  # type: ignore[override]
        self.seen = [int(i["num_threads"]) for i in threadpoolctl.threadpool_info()]
        return Bound(1.0, 1.0)

    def width(self, b: Bound) -> float:
        return 0.0


def test_query_runs_single_threaded_and_restores() -> None:
    before = [int(i["num_threads"]) for i in threadpoolctl.threadpool_info()]
    pld = compose((PoissonSubsampled(Gaussian(1.0), sampling_rate=0.01), 100)).pld()
    probe = _Probe()
    pld._refine(probe, strict=False)
    assert probe.seen and all(n == 1 for n in probe.seen)
    assert [int(i["num_threads"]) for i in threadpoolctl.threadpool_info()] == before
