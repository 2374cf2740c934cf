"""Group privacy with the mechanism known: the exact dominating pair of a group of g records.

:func:`group_mechanism` is a :func:`functools.singledispatch` function, like
:func:`~optcomp.mechanisms.privacy_loss_laws`: a mechanism module registers one small function for its
spec class, returning the specification whose law pair dominates ``mechanism`` on datasets that differ
in a group of at most g records. A class without an entry (or with an entry that refuses) raises
:class:`NoGroupLawError` with the reason; callers then fall back to a route that needs no law (the
privacy profile, :meth:`optcomp.Composition.group_epsilon`).

**Additive noise** (``Gaussian``, ``Laplace``, ``DiscreteLaplace``). With sensitivity Δ stated for the
caller's relation, datasets D, D' joined by a path of at most g neighbouring steps satisfy
‖f(D) − f(D')‖ ≤ gΔ (triangle inequality along the path), so the same noise at sensitivity gΔ
dominates, and it is attained by a query whose every step moves f by Δ in one direction (a counting
query): the group's pair is exactly the mechanism's pair at sensitivity gΔ (GDP: gμ, Dong–Roth–Su
Thm 2.14; Laplace: ε = gΔ/b). A product gΔ that is not a float is rounded up (a larger shift dominates:
the pair is a location family with monotone likelihood ratio, so H_{e^ε} is nondecreasing in the shift).

**Poisson-subsampled Gaussian** (DP-SGD, add/remove). Let D = D' ∪ G with |G| = g (remove a group;
adding one is the reversed pair). Each record enters the batch independently with probability q; given
the batch B' drawn from D' (the same law under both datasets), J ~ Bin(g, q) of G's records join it,
moving the clipped-gradient sum by a vector of norm ≤ JΔ. Conditioned on B', the pair is a translate
of (Σ_S w_S N(v_S, σ²), N(0, σ²)) with ‖v_S‖ ≤ |S|Δ, which the aligned pair
(Σⱼ Bin(g, q)(j)·N(jΔ, σ²), N(0, σ²)) dominates (Ganesh, arXiv 2401.10294; it is the pair of
user-level DP-SGD with g examples per user, :func:`~optcomp.mechanisms.user_level_mixture`, reused
here); joint convexity of the hockey-stick divergence removes the conditioning. Groups of g' < g are
dominated too: the likelihood ratio of the mixture to N(0, σ²) is increasing, so H_{e^ε} is a
supremum over half-lines, and Bin(g, q) ≥ Bin(g', q) stochastically. The pair is attained (all of
G's gradients equal to one clipped vector, the others zero), so it is tight. Covered: the group is
added, or removed, as a whole; a path that adds some records and removes others is **not** covered by
this pair (no proof here), and such a composition is stated under add/remove of a group only.

**Refused** (:class:`NoGroupLawError`; the profile route still applies): sampling without replacement
(the group's count in a fixed-size batch is hypergeometric in the dataset size n, which the
specification does not carry, and the substitution pair is not a one-sided mixture), the truncated
Poisson sampler, the balls-in-bins epochs and shuffling (the group's records share batches and
epochs: no one-record law composes to the group's), and every mechanism without an entry.
"""

from __future__ import annotations

from fractions import Fraction
from functools import singledispatch

from optcomp._numerics import check_int
from optcomp._rounding import next_up
from optcomp.mechanisms._spec import Mechanism

#: Largest group of a Poisson-subsampled Gaussian: its pair is a mixture of g + 1 Gaussians (8 bytes per
#: component per array; larger groups are refused up front instead of failing to allocate).
MAX_POISSON_GROUP: int = 2**20

__all__ = ["MAX_POISSON_GROUP", "NoGroupLawError", "check_group_size", "group_mechanism", "group_sensitivity"]


class NoGroupLawError(ValueError):
    """``mechanism`` has no exact group pair (the message says why); a ``ValueError``."""


def check_group_size(g: object) -> int:
    """``g`` as an ``int`` ≥ 1, else ``ValueError`` naming ``g`` (bools and floats refused)."""
    return check_int("g", g, minimum=1)


def group_sensitivity(g: int, sensitivity: float) -> float:
    """g·Δ, rounded up to the next float when the product is inexact (module docstring)."""
    product = g * sensitivity
    if Fraction(g) * Fraction(sensitivity) != Fraction(product):
        product = next_up(product)
    return product


@singledispatch
def group_mechanism(mechanism: Mechanism, g: int) -> Mechanism:
    """The specification whose pair dominates ``mechanism`` on datasets differing in ≤ g records.

    Args:
        mechanism: a mechanism specification from :mod:`optcomp.mechanisms`.
        g: group size ≥ 1 (``g = 1`` returns ``mechanism`` itself).

    Returns:
        A specification whose law pair is the tight dominating pair of the group (module docstring).

    Raises:
        NoGroupLawError: if no exact group pair is registered for the mechanism's class.
    """
    raise NoGroupLawError(
        f"{type(mechanism).__name__} has no exact group-privacy law (only Gaussian, Laplace, "
        "DiscreteLaplace, PoissonSubsampled(Gaussian) and ZeroConcentrated have one)"
    )
