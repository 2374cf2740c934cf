"""The one table of mechanism names users type: ``optcomp account --mech KIND:...``, a plan's
``mechanism`` field and the planner page's mechanism menu all read it.

Each :class:`MechanismEntry` gives the name, its other accepted spellings, the specification class in
:mod:`optcomp.mechanisms`, a display label, a one-line description of its keys, and whether the budget
planner offers it (the planner calibrates the noise scale of a bounded count, sum, mean or histogram, so
it offers the additive-noise mechanisms with a scale: Laplace, Gaussian, discrete Laplace, discrete
Gaussian; and the exponential mechanism for a quantile, whose scale is its Gumbel temperature 2Δ/ε). A name
means the same mechanism everywhere it is accepted; no other module spells the list out.
"""

from __future__ import annotations

from dataclasses import dataclass

from optcomp.mechanisms._spec import Mechanism
from optcomp.mechanisms.bounded_range import BoundedRange, LaplaceNoisyMax, PermuteAndFlip
from optcomp.mechanisms.discrete import DiscreteLaplace, EpsilonDelta, RandomizedResponse
from optcomp.mechanisms.discrete_gaussian import DiscreteGaussian
from optcomp.mechanisms.gaussian import Gaussian
from optcomp.mechanisms.laplace import Laplace
from optcomp.mechanisms.renyi import Renyi, ZeroConcentrated
from optcomp.mechanisms.staircase import Staircase


@dataclass(frozen=True, slots=True, kw_only=True)
class MechanismEntry:
    """One row of :data:`MECHANISM_NAMES`.

    Attributes:
        name: the name users type (lower case, ``snake_case``).
        aliases: other accepted spellings of the same mechanism.
        spec: the specification class in :mod:`optcomp.mechanisms` it builds.
        label: how a page shows it.
        keys: the keys it takes in ``--mech NAME:KEY=VALUE,...`` (the class's fields, ``eps`` short for
            ``epsilon``), as the CLI's help lists them.
        planner: whether the budget planner (``optcomp plan``, the web page) offers it.
    """

    name: str
    aliases: tuple[str, ...] = ()
    spec: type[Mechanism]
    label: str
    keys: str
    planner: bool = False


#: Every mechanism name, in the order menus list them (the planner's first).
MECHANISM_NAMES: tuple[MechanismEntry, ...] = (
    MechanismEntry(name="laplace", spec=Laplace, label="Laplace",
                   keys="scale=, sensitivity= (default 1)", planner=True),
    MechanismEntry(name="gaussian", spec=Gaussian, label="Gaussian",
                   keys="sigma=, sensitivity= (default 1)", planner=True),
    MechanismEntry(name="discrete_laplace", aliases=("geometric",), spec=DiscreteLaplace, label="discrete Laplace",
                   keys="scale=, sensitivity= (an integer, default 1)", planner=True),
    MechanismEntry(name="epsdelta", spec=EpsilonDelta, label="(ε, δ) black box", keys="eps= (or epsilon=), delta="),
    MechanismEntry(name="rr", aliases=("randomized_response",), spec=RandomizedResponse,
                   label="randomized response", keys="eps="),
    MechanismEntry(name="staircase", spec=Staircase, label="staircase",
                   keys="eps=, gamma= (default: optimal), sensitivity= (default 1)"),
    MechanismEntry(name="dgauss", aliases=("discrete_gaussian",), spec=DiscreteGaussian, label="discrete Gaussian",
                   keys="sigma=, sensitivity= (default 1), dimension= (default 1), norm= (l2, l1 or linf)",
                   planner=True),
    MechanismEntry(name="zcdp", aliases=("zero_concentrated",), spec=ZeroConcentrated, label="ρ-zCDP black box",
                   keys="rho="),
    MechanismEntry(name="renyi", aliases=("rdp",), spec=Renyi, label="Rényi-curve black box",
                   keys="orders=A1;A2;..., epsilons=E1;E2;... (or file=curve.json)"),
    MechanismEntry(name="exponential", aliases=("bounded_range", "gumbel_max"),
                   spec=BoundedRange, label="exponential (ε-BR)",
                   keys="eps= (or epsilon=); count=k for k steps or top-k by peeling", planner=True),
    MechanismEntry(name="permute_and_flip", spec=PermuteAndFlip, label="permute-and-flip (ε-DP, not BR)",
                   keys="eps="),
    MechanismEntry(name="laplace_noisy_max", spec=LaplaceNoisyMax, label="Laplace report-noisy-max (ε-DP, not BR)",
                   keys="eps="),
)


def mechanism_spellings() -> dict[str, MechanismEntry]:
    """Every accepted spelling (names and aliases) → its entry."""
    return {spelling: e for e in MECHANISM_NAMES for spelling in (e.name, *e.aliases)}


def planner_mechanisms() -> tuple[MechanismEntry, ...]:
    """The entries the budget planner offers, in menu order."""
    return tuple(e for e in MECHANISM_NAMES if e.planner)
