"""Matrix-factorization mechanisms (DP-FTRL tree aggregation, BandMF, BLT), certified.

The mechanism releases C X + Z with Z ~ N(0, σ²ζ²) for a strategy C (a factorization A = B C of the
workload; B is post-processing). This package gives

* strategies as frozen specifications (:func:`toeplitz`, :func:`bsr`, :func:`blt`, :func:`dense`,
  :func:`tree`), floats taken as the exact rationals they are;
* participation patterns (:func:`single`, :func:`fixed_epoch`, :func:`min_sep`, and
  :func:`from_min_separation` for the DP-FTRL notebook's y − x − 1 convention);
* :func:`sensitivity`: a certified bracket on Δ with its method;
* :func:`epsilon`/:func:`delta`: the un-amplified release through the certified GDP route;
* :func:`bandmf` (a :class:`BandMF` run), :func:`bandmf_epsilon`/:func:`bandmf_delta`,
  :func:`noise_multiplier`, :func:`steps`: amplified
  BandMF with cyclic Poisson sampling, reduced to per-group compositions of Poisson-subsampled
  Gaussians.

``docs/matrix.md`` has the proofs and the list of what is not covered.
"""

from __future__ import annotations

from typing import Any

from optcomp._numerics import DEFAULT_ACCURACY, Accuracy, Bound
from optcomp.matrix._bandmf import PARTITION_RELATION, BandMF, noise_multiplier, steps
from optcomp.matrix._config import from_jax_privacy_config, pattern_from_text, strategy_from_text
from optcomp.matrix._pattern import (
    FixedEpoch,
    MinSep,
    Pattern,
    Single,
    fixed_epoch,
    from_min_separation,
    min_sep,
    single,
)
from optcomp.matrix._release import (
    NORMALIZERS,
    RELATIONS,
    Release,
    check_normalizer,
    check_relation,
    delta,
    epsilon,
    release,
)
from optcomp.matrix._sensitivity import SensitivityBound, sensitivity
from optcomp.matrix._strategy import Blt, Dense, Strategy, Toeplitz, Tree, blt, bsr, dense, toeplitz, tree

__all__ = [
    "NORMALIZERS",
    "PARTITION_RELATION",
    "RELATIONS",
    "BandMF",
    "Blt",
    "Dense",
    "FixedEpoch",
    "MinSep",
    "Pattern",
    "Release",
    "SensitivityBound",
    "Single",
    "Strategy",
    "Toeplitz",
    "Tree",
    "bandmf",
    "bandmf_delta",
    "bandmf_epsilon",
    "blt",
    "bsr",
    "check_normalizer",
    "check_relation",
    "delta",
    "dense",
    "epsilon",
    "fixed_epoch",
    "from_jax_privacy_config",
    "from_min_separation",
    "min_sep",
    "noise_multiplier",
    "pattern_from_text",
    "release",
    "sensitivity",
    "single",
    "steps",
    "strategy_from_text",
    "toeplitz",
    "tree",
]


def bandmf(
    strategy: Strategy,
    *,
    cycle_length: int,
    sampling_rate: float,
    noise_multiplier: float,
    partition: str = "equal_split",
    partition_public: bool = False,
    per_column: bool = True,
    group_size: int | None = None,
    max_batch_size: int | None = None,
    examples_per_user: int = 1,
) -> BandMF:
    """An amplified BandMF run with cyclic Poisson sampling (:class:`BandMF`; ``docs/matrix.md`` P5)."""
    return BandMF(strategy, cycle_length, sampling_rate, noise_multiplier, partition,  # type: ignore[arg-type]
                  partition_public, per_column, group_size, max_batch_size, examples_per_user)


def bandmf_epsilon(strategy: Strategy, *, delta: float, accuracy: Accuracy = DEFAULT_ACCURACY,
                   **run: Any) -> Bound:
    """Certified ε(δ) of an amplified BandMF run (keywords as :func:`bandmf`); see :meth:`BandMF.epsilon`."""
    return bandmf(strategy, **run).epsilon(delta, accuracy=accuracy)


def bandmf_delta(strategy: Strategy, *, epsilon: float, accuracy: Accuracy = DEFAULT_ACCURACY,
                 **run: Any) -> Bound:
    """Certified δ(ε) of an amplified BandMF run (keywords as :func:`bandmf`); see :meth:`BandMF.delta`."""
    return bandmf(strategy, **run).delta(epsilon, accuracy=accuracy)
