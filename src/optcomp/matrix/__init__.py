"""Matrix-factorization mechanisms (DP-FTRL tree aggregation, BandMF, BLT), certified.

The mechanism releases C X + Z with Z ~ N(0, σ²ζ²) for a strategy C (a factorization A = B C of the
workload; B is post-processing). This package gives

* strategies as frozen specifications (:func:`toeplitz`, :func:`bsr`, :func:`blt`, :func:`dense`,
  :func:`tree`), floats taken as the exact rationals they are;
* participation patterns (:func:`single`, :func:`fixed_epoch`, :func:`min_sep`, and
  :func:`from_min_separation` for the DP-FTRL notebook's y − x − 1 convention);
* :func:`sensitivity`: a certified bracket on Δ with its method;
* :func:`epsilon`/:func:`delta`: the un-amplified release through the certified GDP route;
* :func:`bandmf_epsilon`/:func:`bandmf_delta`, :func:`noise_multiplier`, :func:`steps`: amplified
  BandMF with cyclic Poisson sampling, reduced to per-group compositions of Poisson-subsampled
  Gaussians.

``docs/matrix.md`` has the proofs and the list of what is not covered.
"""

from __future__ import annotations

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
from optcomp.matrix._sensitivity import SensitivityBound, sensitivity
from optcomp.matrix._strategy import Blt, Dense, Strategy, Toeplitz, Tree, blt, bsr, dense, toeplitz, tree

__all__ = [
    "Blt",
    "Dense",
    "FixedEpoch",
    "MinSep",
    "Pattern",
    "SensitivityBound",
    "Single",
    "Strategy",
    "Toeplitz",
    "Tree",
    "blt",
    "bsr",
    "dense",
    "fixed_epoch",
    "from_min_separation",
    "min_sep",
    "sensitivity",
    "single",
    "toeplitz",
    "tree",
]
