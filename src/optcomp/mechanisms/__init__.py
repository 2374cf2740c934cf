"""Mechanisms: frozen specifications and the exact laws of their privacy loss.

Each specification is a frozen, validated dataclass (a :class:`Mechanism`); :func:`privacy_loss_laws`
maps it to the pair ``(remove_law, add_law)`` of :class:`PrivacyLossLaw` objects that
:mod:`optcomp.pld` discretises (symmetric mechanisms return the same object twice). The defining
parameter is positional, all others keyword-only. Base mechanisms are relation-agnostic
(``neighbouring = None``: state the sensitivity for the relation you use); only the subsampling
wrappers fix one (``PoissonSubsampled``: ``"add_remove"``, ``SubsampledWithoutReplacement``:
``"substitution"``), and :func:`optcomp.compose` refuses to mix them.

Specifications, with the pair (P, Q) of the remove direction and the kind of law:

* ``Gaussian(sigma, *, sensitivity=1.0)``: N(Δ, σ²), N(0, σ²); continuous.
* ``Laplace(scale, *, sensitivity=1.0)``: Lap(Δ, b), Lap(0, b); atoms ±Δ/b + continuous.
* ``TruncatedLaplace(scale, *, truncation, sensitivity=1.0)``: Δ + T, T with T ∝ e^{−|x|/b} on
  [−A, A]; atoms, continuous, ±∞ masses.
* ``DiscreteLaplace(scale, *, sensitivity=1)``: Δ + K, K with P(K = j) ∝ e^{−|j|/b}; Δ + 1 atoms.
* ``ShiftedTruncatedLaplace(scale, *, mean, sensitivity=1)``: c + Δ + N, c + N,
  N = max(0, ⌈Lap(mean, b)⌉); finite atoms.
* ``EpsilonDelta(epsilon, *, delta)``: KOV canonical mechanism, eqs (9)–(10); atoms ±ε, ±∞.
* ``RandomizedResponse(epsilon)``: [e^ε, 1]/(1+e^ε), its reverse; atoms ±ε.
* ``KaryRandomizedResponse(epsilon, *, k)``: [e^ε, 1, …]/Z, [1, e^ε, …]/Z; atoms ±ε, 0.
* ``DiscretePair(p, q)``: p, q; atoms, ±∞.
* ``PoissonSubsampled(mechanism, *, sampling_rate)``: qP + (1−q)Q, Q (add: swap); add/remove;
  exact transform.
* ``SubsampledWithoutReplacement(mechanism, *, sampling_rate)``: symmetrized Poisson law;
  substitution; exact, tight.
* ``MixtureOfGaussians(sigma, *, sensitivities, probabilities)``: Σ pᵢ N(cᵢ, σ²), N(0, σ²) (add:
  swap); continuous.
* ``TruncatedPoissonGaussian(sigma, *, dataset_size, sampling_rate, max_batch_size)``: Poisson
  sampling capped at B; (1 − t)·Poisson(q, Δ=1) ⊕ t·Poisson(q̄, Δ=2), the event {t} shown; add/remove;
  dominating (not claimed tight).
* ``DiscreteGaussian(sigma, *, sensitivity=1, dimension=1, norm="l2")`` or ``(sigma, *, shift=(...))``:
  v + X, X with X_t ~ N_ℤ(0, σ²) (Canonne–Kamath–Steinke); atoms on the exact lattice c·(‖v‖² + 2ℤ),
  c = 1/(2σ²) (also a :class:`LatticeLaw`: :func:`lattice_law`).
* ``Staircase(epsilon, *, gamma=None, sensitivity=1.0)``: Δ + staircase noise, staircase noise
  (Geng–Viswanath); atoms ±ε, 0.
* ``ZeroConcentrated(rho)``, ``Renyi(orders, epsilons)``: black boxes known only by their Rényi curve
  (ρ-zCDP; D_α ≤ εᵢ at the stated orders), both directions; no law (compositions holding one are
  answered by the Rényi conversion, :mod:`optcomp.rdp`).
* ``BoundedRange(epsilon)``: one ε-bounded-range step (the exponential mechanism, Gumbel noisy max, one
  round of top-k peeling; ``ExponentialMechanism``, ``GumbelNoisyMax``, ``GumbelTopK``): a *family* of
  worst-case pairs, composed by :mod:`optcomp.adaptive`; its law here is only its ε-DP pair.
* ``PermuteAndFlip(epsilon)``, ``LaplaceNoisyMax(epsilon)``: ε-DP selections that are not bounded-range;
  the ε-DP pair (randomized response).

:func:`tight_zcdp` is the tight zCDP ρ of one run where it has a closed form (Gaussian, Laplace, ε-DP boxes,
bounded range).

:func:`group_mechanism` maps a specification to the one whose pair dominates a group of g records
(``Gaussian``, ``Laplace``, ``DiscreteLaplace``, ``PoissonSubsampled(Gaussian)``; others raise
:class:`NoGroupLawError`, a ``ValueError``).

:data:`MECHANISM_NAMES` is the one table of the names users type for them (the CLI's ``--mech`` kinds,
a plan's ``mechanism``, the planner page's menu).
"""

from __future__ import annotations

from optcomp.mechanisms import _dgauss_law  # noqa: F401  (registers the DiscreteGaussian law pair)
from optcomp.mechanisms._dispatch import LawPair, check_mechanism, is_mechanism, privacy_loss_laws
from optcomp.mechanisms._group import NoGroupLawError, check_group_size, group_mechanism
from optcomp.mechanisms._lattice import LatticeFactor, LatticeLaw, common_lattice, lattice_law
from optcomp.mechanisms._law import ContinuousLoss, PrivacyLossLaw, log_tails
from optcomp.mechanisms._names import MECHANISM_NAMES, MechanismEntry, mechanism_spellings, planner_mechanisms
from optcomp.mechanisms._spec import (
    NEIGHBOURING_RELATIONS,
    RELATIONS,
    Mechanism,
    Neighbouring,
    Relation,
    check_neighbouring,
    combined_relation,
)
from optcomp.mechanisms._zcdp import tight_zcdp
from optcomp.mechanisms.bounded_range import (
    BoundedRange,
    ExponentialMechanism,
    GumbelNoisyMax,
    GumbelTopK,
    LaplaceNoisyMax,
    PermuteAndFlip,
)
from optcomp.mechanisms.discrete import (
    DiscreteLaplace,
    DiscretePair,
    EpsilonDelta,
    KaryRandomizedResponse,
    RandomizedResponse,
)
from optcomp.mechanisms.discrete_gaussian import DiscreteGaussian
from optcomp.mechanisms.gaussian import Gaussian
from optcomp.mechanisms.laplace import Laplace, ShiftedTruncatedLaplace, TruncatedLaplace
from optcomp.mechanisms.mixture import MixtureOfGaussians, check_user_level_mean, user_level_mixture
from optcomp.mechanisms.renyi import NoPrivacyLossLawError, Renyi, ZeroConcentrated, is_renyi_item
from optcomp.mechanisms.staircase import Staircase, optimal_gamma
from optcomp.mechanisms.subsampling import PoissonSubsampled, SubsampledWithoutReplacement
from optcomp.mechanisms.truncated import TruncatedPoissonGaussian

__all__ = [
    "MECHANISM_NAMES",
    "NEIGHBOURING_RELATIONS",
    "RELATIONS",
    "BoundedRange",
    "ContinuousLoss",
    "DiscreteGaussian",
    "DiscreteLaplace",
    "DiscretePair",
    "EpsilonDelta",
    "ExponentialMechanism",
    "Gaussian",
    "GumbelNoisyMax",
    "GumbelTopK",
    "KaryRandomizedResponse",
    "Laplace",
    "LaplaceNoisyMax",
    "LatticeFactor",
    "LatticeLaw",
    "LawPair",
    "Mechanism",
    "MechanismEntry",
    "MixtureOfGaussians",
    "Neighbouring",
    "NoGroupLawError",
    "NoPrivacyLossLawError",
    "PermuteAndFlip",
    "PoissonSubsampled",
    "PrivacyLossLaw",
    "RandomizedResponse",
    "Relation",
    "Renyi",
    "ShiftedTruncatedLaplace",
    "Staircase",
    "SubsampledWithoutReplacement",
    "TruncatedLaplace",
    "TruncatedPoissonGaussian",
    "ZeroConcentrated",
    "check_group_size",
    "check_mechanism",
    "check_neighbouring",
    "check_user_level_mean",
    "combined_relation",
    "common_lattice",
    "group_mechanism",
    "is_mechanism",
    "is_renyi_item",
    "lattice_law",
    "log_tails",
    "mechanism_spellings",
    "optimal_gamma",
    "planner_mechanisms",
    "privacy_loss_laws",
    "tight_zcdp",
    "user_level_mixture",
]
