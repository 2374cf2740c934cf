"""DP-SGD batches of Poisson sampling truncated to a cap: the dominating pair, the truncation mass.

The pipeline (dp_accounting's ``TruncatedSubsampledGaussianDpEvent``, arXiv 2508.15089): from a dataset
of n records, keep each independently with probability q; if more than B were kept, keep a uniformly
random subset of B of them; release the sum of the kept records' gradients (clipped to norm 1) plus
N(0, σ²). Relation: add/remove one record x; D holds x and n − 1 others, D' = D without x.

Let S ~ Binomial(n − 1, q) count the *other* records kept: its law is the same under D and D', so
showing S (or any function of it) to the adversary only strengthens it (post-processing), and the
pair that shows the event {S ≥ B} dominates the run (:func:`~optcomp.mechanisms.mixture.revealed_mixture`):

* **S ≤ B − 1** (probability 1 − t): nothing is truncated under either dataset; x is in the batch with
  probability q and adds a vector of norm ≤ 1. By joint convexity over the batch, the branch is
  dominated by the Poisson pair (q·N(1, σ²) + (1 − q)·N(0, σ²), N(0, σ²)) and its swap.
* **S ≥ B** (probability t = P(Bin(n − 1, q) ≥ B), the *truncation mass*): under D' the batch is a
  uniform B-subset of the dataset; under D, x survives with probability B/(S + 1) and then *replaces*
  one of the others (the rest being a uniform (B − 1)-subset), else the batch is the D' batch. Given
  the event, x is in the batch with probability

      q̄ = E[q·B/(S + 1) | S ≥ B] = (B/n)·P(Bin(n, q) ≥ B + 1)/t,

  and a replacement moves the sum by a vector of norm ≤ 2: the branch is dominated by
  (q̄·N(2, σ²) + (1 − q̄)·N(0, σ²), N(0, σ²)) and its swap (joint convexity over the coupled batches).

The law is (1 − t)·Poisson(q, Δ = 1) ⊕ t·Poisson(q̄, Δ = 2), both directions. Its ε is a certified
*upper* bound for the run (the engine's upper end); it is not claimed tight, because a real run does
not show the event {S ≥ B}. dp_accounting 0.6 uses the same split but accounts for the truncated
branch with its ``REPLACE_ONE`` law (the symmetrization, pointwise larger than either direction of the
Poisson pair), so its number lies above ours. A certified *lower* bound for the run is the pair of
:func:`truncated_poisson_lower_pair`: all other gradients 0, x's gradient a unit vector; the run's
output is then exactly the Poisson pair with the rate q_eff = q(1 − t) + t·q̄ at which x reaches the
batch (it is one dataset pair, so its ε is at most the run's).

t and q̄ are computed with scipy's binomial survival function (Boost's regularized incomplete beta,
relative error of a few ulps); with B ≥ n truncation never happens (t = 0) and the law is Poisson's.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import KW_ONLY, dataclass
from typing import ClassVar

from optcomp._numerics import POSITIVE, SAMPLING_RATE, Domain, integers
from optcomp.mechanisms._dispatch import LawPair, privacy_loss_laws
from optcomp.mechanisms._group import NoGroupLawError, group_mechanism
from optcomp.mechanisms._spec import Mechanism, Neighbouring, validate_parameters
from optcomp.mechanisms.discrete import RandomizedResponse
from optcomp.mechanisms.gaussian import Gaussian
from optcomp.mechanisms.mixture import revealed_mixture
from optcomp.mechanisms.renyi import is_renyi_item, run_stand_in
from optcomp.mechanisms.subsampling import PoissonSubsampled, SubsampledWithoutReplacement


@dataclass(frozen=True, slots=True)
class TruncatedPoissonGaussian:
    """One DP-SGD step with Poisson sampling truncated to ``max_batch_size`` (module docstring).

    ``TruncatedPoissonGaussian(sigma, *, dataset_size, sampling_rate, max_batch_size)``; the relation
    is add/remove one record; gradients clipped to norm 1 (scale σ for another clipping norm).

    Attributes:
        sigma: noise standard deviation σ > 0 (the noise multiplier).
        dataset_size: n, the number of records including the one added or removed; integer ≥ 1.
        sampling_rate: q in (0, 1].
        max_batch_size: B, the cap on the batch; integer ≥ 1.
    """

    sigma: float
    _: KW_ONLY
    dataset_size: int
    sampling_rate: float
    max_batch_size: int
    neighbouring: ClassVar[Neighbouring | None] = "add_remove"
    domains: ClassVar[Mapping[str, Domain]] = {
        "sigma": POSITIVE,
        "dataset_size": integers(1),
        "sampling_rate": SAMPLING_RATE,
        "max_batch_size": integers(1),
    }

    def __post_init__(self) -> None:
        validate_parameters(self)

    @property
    def truncation_mass(self) -> float:
        """t = P(Bin(n − 1, q) ≥ B): the probability that x, if kept, meets a full batch."""
        from scipy import stats  # here: scipy.stats costs 0.3 s to import (the CLI's cold start)

        n, q, b = self.dataset_size, self.sampling_rate, self.max_batch_size
        return 0.0 if b >= n else float(stats.binom.sf(b - 1, n - 1, q))

    @property
    def truncated_rate(self) -> float:
        """q̄ = (B/n)·P(Bin(n, q) ≥ B + 1)/t: x's chance to be in a truncated batch (0 if t = 0)."""
        from scipy import stats

        t = self.truncation_mass
        n, q, b = self.dataset_size, self.sampling_rate, self.max_batch_size
        return 0.0 if t == 0.0 else min(1.0, b / n * float(stats.binom.sf(b, n, q)) / t)

    @property
    def effective_rate(self) -> float:
        """q_eff = q·(1 − t) + t·q̄ = P(x in the batch): the rate of the explicit lower-bound pair."""
        t = self.truncation_mass
        return self.sampling_rate * (1.0 - t) + t * self.truncated_rate


def truncated_poisson_lower_pair(step: TruncatedPoissonGaussian) -> PoissonSubsampled | Gaussian:
    """An explicit dataset pair of the run: other gradients 0, x's a unit vector (module docstring).

    Its output is exactly (q_eff·N(1, σ²) + (1 − q_eff)·N(0, σ²), N(0, σ²)) (and the swap for the
    added direction), so any lower bound on its ε is a lower bound on the run's ε.
    """
    rate = step.effective_rate
    base = Gaussian(step.sigma)
    return base if rate >= 1.0 else PoissonSubsampled(base, sampling_rate=rate)


def dominated_counterpart(mechanism: Mechanism) -> Mechanism:
    """The pair whose lower end bounds the *run's* ε from below: a truncated-Poisson step's explicit pair
    (:func:`truncated_poisson_lower_pair`; its law only dominates the run); a fixed-size step's attained
    one-direction pairs, ``PoissonSubsampled`` of its base (all other records equal to the replaced one;
    the symmetrized step law dominates each step, but its composition is not shown attained; compose
    these with no relation fixed); a black box known only by its Rényi curve, a Gaussian meeting that
    curve (:func:`~optcomp.mechanisms.renyi.run_stand_in`: one possible run of the box; the summed curve's
    worst law is not shown to be a run of several items), or the silent ``RandomizedResponse(0)``; any
    other mechanism itself (its law is the run's own pair). Read by the run bracket's rule
    (:func:`optcomp._items.dominated_items`), wherever items are composed and a lower end reported."""
    if is_renyi_item(mechanism):
        stand_in = run_stand_in(mechanism)
        return RandomizedResponse(0.0) if stand_in is None else stand_in
    if isinstance(mechanism, TruncatedPoissonGaussian):
        return truncated_poisson_lower_pair(mechanism)
    if isinstance(mechanism, SubsampledWithoutReplacement):
        q = mechanism.sampling_rate  # q = 1: no sampling, the step is the base (stated for substitution)
        return mechanism.mechanism if q == 1.0 else PoissonSubsampled(mechanism.mechanism, sampling_rate=q)
    return mechanism


@privacy_loss_laws.register
def _truncated_laws(mechanism: TruncatedPoissonGaussian) -> LawPair:
    q = mechanism.sampling_rate
    full = privacy_loss_laws(PoissonSubsampled(Gaussian(mechanism.sigma), sampling_rate=q))
    t = mechanism.truncation_mass
    if t == 0.0:
        return full
    qbar = mechanism.truncated_rate
    swap = Gaussian(mechanism.sigma, sensitivity=2.0)
    cut = privacy_loss_laws(swap if qbar >= 1.0 else PoissonSubsampled(swap, sampling_rate=qbar))
    weights = (1.0 - t, t)
    return (revealed_mixture([full[0], cut[0]], weights), revealed_mixture([full[1], cut[1]], weights))


@group_mechanism.register
def _truncated_group(mechanism: TruncatedPoissonGaussian, g: int) -> Mechanism:
    """Refused: the cap on the batch couples the group's records (no group law is derived here)."""
    raise NoGroupLawError(
        "TruncatedPoissonGaussian has no exact group-privacy law: the batch cap couples the group's records, "
        "and no dominating pair of a group is derived for it"
    )
