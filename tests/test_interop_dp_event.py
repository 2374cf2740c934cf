"""``optcomp.interop.from_dp_event``: real dp_accounting event trees against dp_accounting's own fine-grid
PLD answer and independent references; the three spellings; the JSON round trip; refusals with paths."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from typing import Any

import pytest

from optcomp import Accuracy, Bound, compose
from optcomp.interop import EventComposition, from_dp_event, to_dp_event_json
from optcomp.mechanisms import (
    DiscreteLaplace,
    EpsilonDelta,
    Gaussian,
    KaryRandomizedResponse,
    Laplace,
    PoissonSubsampled,
    RandomizedResponse,
    SubsampledWithoutReplacement,
    TruncatedLaplace,
)
from tests._references import gdp_epsilon, kary_rr_epsilon, without_replacement_gaussian_epsilon
from tests.tolerances import COARSE_GRID_STEP, DP_ACCOUNTING_FINE_STEP

dp = pytest.importorskip("dp_accounting")
E = dp.dp_event
NR = dp.NeighboringRelation
DELTA = 1e-5


def dp_accounting_epsilon(event: Any, relation: Any, delta: float = DELTA) -> float:
    """dp_accounting's pessimistic PLD estimate at the fine grid Δ = 1e-5."""
    accountant = dp.pld.PLDAccountant(relation, value_discretization_interval=DP_ACCOUNTING_FINE_STEP)
    accountant.compose(event)
    return float(accountant.get_epsilon(delta))


def assert_brackets(bound: Bound, estimate: float, discretised_steps: int) -> None:
    """The estimate lies in our bracket up to its own discretisation error (one grid step per discretised
    step, on the pessimistic side: the estimate is at least the truth, so never below our lower end)."""
    slack = discretised_steps * DP_ACCOUNTING_FINE_STEP
    assert bound.lower <= estimate <= bound.upper + slack, (bound, estimate, slack)


# (id, event, relation, number of steps dp_accounting discretises separately)
CASES: list[tuple[str, Any, Any, int]] = [
    ("gaussian", E.SelfComposedDpEvent(E.GaussianDpEvent(4.0), 4), NR.ADD_OR_REMOVE_ONE, 1),
    ("gaussian-replace", E.SelfComposedDpEvent(E.GaussianDpEvent(8.0), 4), NR.REPLACE_ONE, 1),
    ("laplace", E.SelfComposedDpEvent(E.LaplaceDpEvent(2.0), 3), NR.ADD_OR_REMOVE_ONE, 3),
    ("discrete-laplace", E.SelfComposedDpEvent(E.DiscreteLaplaceDpEvent(0.7, 2), 3), NR.ADD_OR_REMOVE_ONE, 3),
    ("rr-binary", E.RandomizedResponseDpEvent(0.4, 2), NR.REPLACE_ONE, 1),
    ("rr-kary", E.RandomizedResponseDpEvent(0.3, 5), NR.REPLACE_ONE, 1),
    (
        "poisson-gaussian",
        E.SelfComposedDpEvent(E.PoissonSampledDpEvent(0.05, E.GaussianDpEvent(2.0)), 6),
        NR.ADD_OR_REMOVE_ONE,
        6,
    ),
    (
        "poisson-laplace",
        E.SelfComposedDpEvent(E.PoissonSampledDpEvent(0.1, E.LaplaceDpEvent(1.0)), 5),
        NR.ADD_OR_REMOVE_ONE,
        5,
    ),
    (
        "mixture",
        E.ComposedDpEvent(
            [
                E.SelfComposedDpEvent(E.PoissonSampledDpEvent(0.02, E.GaussianDpEvent(2.0)), 5),
                E.LaplaceDpEvent(5.0),
                E.NoOpDpEvent(),
                E.ComposedDpEvent([E.DiscreteLaplaceDpEvent(0.2, 1), E.GaussianDpEvent(8.0)]),
                E.SelfComposedDpEvent(E.NoOpDpEvent(), 7),
            ]
        ),
        NR.ADD_OR_REMOVE_ONE,
        9,
    ),
]


@pytest.mark.parametrize(("event", "relation", "steps"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bracket_contains_dp_accounting_fine_grid(event: Any, relation: Any, steps: int) -> None:
    bound = from_dp_event(event, neighbouring=relation).epsilon(DELTA)
    assert_brackets(bound, dp_accounting_epsilon(event, relation), steps)


def test_gaussian_matches_closed_form_under_both_relations() -> None:
    """k Gaussians of multiplier z are √k/z-GDP (add/remove) and 2√k/z-GDP (substitution: shift 2C)."""
    event = E.SelfComposedDpEvent(E.GaussianDpEvent(3.0), 4)
    assert from_dp_event(event).epsilon(DELTA).contains(float(gdp_epsilon(2.0 / 3.0, DELTA)))
    assert (
        from_dp_event(event, neighbouring="substitution")
        .epsilon(DELTA)
        .contains(float(gdp_epsilon(4.0 / 3.0, DELTA)))
    )


def test_laplace_under_substitution_has_twice_the_sensitivity() -> None:
    """dp_accounting refuses Laplace under REPLACE_ONE; optcomp reads it with sensitivity 2C, ε₀ = 2/s, and
    the Laplace curve δ(ε) = 1 − e^{(ε − ε₀)/2} on [0, ε₀] gives ε(δ) = ε₀ + 2 ln(1 − δ) exactly."""
    composition = from_dp_event(E.LaplaceDpEvent(4.0), neighbouring="substitution")
    assert composition.items == ((Laplace(scale=4.0, sensitivity=2.0), 1),)
    for delta in (DELTA, 0.1):
        assert composition.epsilon(delta).contains(0.5 + 2 * math.log1p(-delta))


def test_listed_case_dp_accounting_counts_self_composed_randomized_response_once() -> None:
    """Listed exception: dp_accounting 0.6's PLDAccountant ignores SelfComposedDpEvent's count for
    RandomizedResponseDpEvent (it composes the RR PLD once). The exact trinomial reference shows it is
    below the truth, and optcomp's bracket contains the truth."""
    event = E.SelfComposedDpEvent(E.RandomizedResponseDpEvent(0.3, 5), 6)
    composition = from_dp_event(event, neighbouring=NR.REPLACE_ONE)
    eps = math.log1p(5 * 0.7 / 0.3)
    assert composition.items == ((KaryRandomizedResponse(eps, k=5), 6),)
    truth = kary_rr_epsilon(eps, 5, 6, DELTA)
    bound = composition.epsilon(DELTA)
    assert bound.lower <= truth <= bound.upper
    reference = dp_accounting_epsilon(event, NR.REPLACE_ONE)
    assert reference < bound.lower  # dp_accounting under-reports here
    single = dp_accounting_epsilon(E.RandomizedResponseDpEvent(0.3, 5), NR.REPLACE_ONE)
    assert reference == single


def test_sampled_without_replacement_matches_balle_barthe_gaboardi() -> None:
    """dp_accounting has no SampledWithoutReplacement PLD; reference: the tight amplification
    ε' = ln(1 + q(e^ε − 1)) at δ' = q·δ, ε = ε_G(δ'/q) of the Gaussian with shift 2C (substitution)."""
    event = E.SampledWithoutReplacementDpEvent(1000, 50, E.GaussianDpEvent(2.0))
    composition = from_dp_event(event, neighbouring="substitution")
    assert composition.items == (
        (SubsampledWithoutReplacement(Gaussian(sigma=2.0, sensitivity=2.0), sampling_rate=0.05), 1),
    )
    q = 0.05
    truth = without_replacement_gaussian_epsilon(1.0, q, DELTA)
    assert composition.epsilon(DELTA).contains(truth)


def test_epsilon_delta_trees_use_optimal_composition_and_agree_with_the_pld() -> None:
    event = {
        "class_name": "ComposedDpEvent",
        "events": [
            {
                "class_name": "SelfComposedDpEvent",
                "count": 30,
                "event": {"class_name": "EpsilonDeltaDpEvent", "epsilon": 0.1, "delta": 1e-7},
            },
            {"class_name": "EpsilonDeltaDpEvent", "epsilon": 0.5, "delta": 0.0},
        ],
    }
    composition = from_dp_event(event)
    assert composition.engine == "optimal"
    exact = composition.epsilon(DELTA)
    pld = composition.pld().epsilon(DELTA)
    assert exact.lower <= pld.upper and pld.lower <= exact.upper
    assert exact.width <= pld.width


def test_non_private_is_infinite_everywhere_dp_accounting_agrees() -> None:
    event = E.ComposedDpEvent([E.LaplaceDpEvent(1.0), E.NonPrivateDpEvent()])
    composition = from_dp_event(event)
    assert not composition.private
    assert composition.non_private == ("root.events[1]",)
    assert composition.epsilon(DELTA) == Bound(math.inf, math.inf)
    assert composition.delta(10.0) == Bound(1.0, 1.0)
    assert dp_accounting_epsilon(event, NR.ADD_OR_REMOVE_ONE) == math.inf
    zero_noise = from_dp_event(E.GaussianDpEvent(0.0))
    assert not zero_noise.private and zero_noise.non_private == ("root",)


def test_non_private_under_sampling_is_accounted_exactly() -> None:
    """A sampled non-private release is δ = q at every ε: finite ε once δ ≥ q, infinite below."""
    composition = from_dp_event(E.PoissonSampledDpEvent(0.01, E.NonPrivateDpEvent()))
    assert composition.private
    assert composition.epsilon(0.001).lower == math.inf
    assert composition.epsilon(0.02).upper == 0.0


def test_no_ops_give_zero() -> None:
    for event in (
        E.NoOpDpEvent(),
        E.ComposedDpEvent([]),
        E.SelfComposedDpEvent(E.GaussianDpEvent(1.0), 0),
        E.PoissonSampledDpEvent(0.0, E.GaussianDpEvent(1.0)),
    ):
        composition = from_dp_event(event)
        assert composition.engine == "none"
        assert composition.epsilon(DELTA) == Bound(0.0, 0.0)
    assert from_dp_event(E.RandomizedResponseDpEvent(0.5, 1), neighbouring="substitution").items == ()


def test_sampled_gaussian_compositions_merge_to_a_dominating_gaussian() -> None:
    """Poisson sampling of k Gaussians = sampling one Gaussian with μ² = Σ μᵢ² (one linear statistic);
    the merged σ is on the safe side of the exact σ = 1 (μ widened up, σ rounded down), a few ulps away."""
    event = E.PoissonSampledDpEvent(
        0.1, E.ComposedDpEvent([E.SelfComposedDpEvent(E.GaussianDpEvent(2.0), 3), E.GaussianDpEvent(2.0)])
    )
    ((mechanism, count),) = from_dp_event(event).items
    assert count == 1 and isinstance(mechanism, PoissonSubsampled) and mechanism.sampling_rate == 0.1
    sigma = mechanism.mechanism.sigma
    assert sigma <= 1.0 and 1.0 - sigma <= 16 * 2.0**-53


def test_three_spellings_agree() -> None:
    event = CASES[-1][1]
    objects = from_dp_event(event)
    named = from_dp_event(event.to_named_tuple())
    exported = json.loads(json.dumps(to_json(event.to_named_tuple())))
    assert objects.items == named.items == from_dp_event(exported).items


def to_json(node: Any) -> Any:
    """A named tuple tree as the documented JSON (``_asdict`` recursively)."""
    if hasattr(node, "_asdict"):
        return {k: to_json(v) for k, v in node._asdict().items()}
    if isinstance(node, list):
        return [to_json(v) for v in node]
    return node


@pytest.mark.parametrize("neighbouring", ["add_remove", "substitution"])
def test_round_trip_through_json(neighbouring: str) -> None:
    if neighbouring == "add_remove":
        items: list[Any] = [
            (PoissonSubsampled(Gaussian(sigma=1.25), sampling_rate=0.01), 40),
            Laplace(scale=3.0),
            (DiscreteLaplace(0.5, sensitivity=3), 2),
            EpsilonDelta(0.25, delta=1e-6),
        ]
    else:
        items = [
            (SubsampledWithoutReplacement(Gaussian(sigma=2.0, sensitivity=2.0), sampling_rate=0.05), 10),
            Laplace(scale=3.0, sensitivity=2.0),
            (DiscreteLaplace(0.5, sensitivity=4), 2),
        ]
    text = json.dumps(to_dp_event_json(*items, neighbouring=neighbouring))
    back = from_dp_event(json.loads(text), neighbouring=neighbouring)
    assert [m for m, _ in back.items] == [i[0] if isinstance(i, tuple) else i for i in items]
    assert back.to_dp_event_json() == json.loads(text)
    coarse = Accuracy(grid_step=COARSE_GRID_STEP)
    got, composed = back.epsilon(DELTA, accuracy=coarse), compose(*items, accuracy=coarse).epsilon(DELTA)
    assert got == composed  # compose's lower end is the run's too (Composition.dominated)
    # substitution: the fixed-size steps' lower end is their attained one-direction pairs' (issue 27 C audit)
    law = compose(*items, accuracy=coarse).dominating().epsilon(DELTA)
    assert got.lower == law.lower if neighbouring == "add_remove" else got.lower < law.lower


def test_round_trip_of_randomized_response_and_non_private() -> None:
    items = [(KaryRandomizedResponse(1.5, k=4), 3), RandomizedResponse(0.7)]
    back = from_dp_event(to_dp_event_json(*items, neighbouring="substitution"), neighbouring="substitution")
    (kary, count), (binary, _) = back.items
    assert isinstance(kary, KaryRandomizedResponse) and kary.k == 4 and count == 3
    assert math.isclose(kary.epsilon, 1.5, rel_tol=1e-14) and math.isclose(binary.epsilon, 0.7, rel_tol=1e-14)  # type: ignore[attr-defined]
    assert to_dp_event_json(EpsilonDelta(0.0, delta=1.0)) == {"class_name": "NonPrivateDpEvent"}


def test_export_refuses_what_has_no_event() -> None:
    with pytest.raises(ValueError, match="TruncatedLaplace has no DpEvent"):
        to_dp_event_json(TruncatedLaplace(1.0, truncation=2.0))
    with pytest.raises(ValueError, match="substitution"):
        to_dp_event_json(RandomizedResponse(1.0))
    with pytest.raises(ValueError, match="even"):
        to_dp_event_json(DiscreteLaplace(1.0, sensitivity=3), neighbouring="substitution")


@pytest.mark.parametrize(
    ("event", "relation", "message"),
    [
        (
            E.ComposedDpEvent(
                [E.NoOpDpEvent(), E.SampledWithReplacementDpEvent(100, 10, E.GaussianDpEvent(1.0))]
            ),
            "add_remove",
            r"SampledWithReplacementDpEvent at root\.events\[1\]",
        ),
        (
            E.SelfComposedDpEvent(E.UnsupportedDpEvent(), 3),
            "add_remove",
            r"UnsupportedDpEvent at root\.event",
        ),
        (E.ZCDpEvent(0.5), "add_remove", "ZCDpEvent at root"),
        (
            E.SingleEpochTreeAggregationDpEvent(1.0, 4),
            "add_remove",
            "SingleEpochTreeAggregationDpEvent at root",
        ),
        (
            E.RepeatAndSelectDpEvent(E.GaussianDpEvent(1.0), 2.0, 1.0),
            "add_remove",
            "RepeatAndSelectDpEvent at root",
        ),
        (
            E.MixtureOfGaussiansDpEvent(1.0, [-1.0, 1.0], [0.5, 0.5]),
            "add_remove",
            r"root\.sensitivities must be >= 0",
        ),
        (
            E.MixtureOfGaussiansDpEvent(1.0, [0.0, 1.0], [0.5, 0.6]),
            "add_remove",
            "root: probabilities must sum to 1",
        ),
        (
            E.TruncatedSubsampledGaussianDpEvent(100, 0.1, 20, 1.0),
            "substitution",
            "TruncatedSubsampledGaussianDpEvent at root is supported under add/remove only",
        ),
        (
            E.RandomizedResponseDpEvent(0.5, 3),
            "add_remove",
            "RandomizedResponseDpEvent at root needs neighbouring='substitution'",
        ),
        (
            E.PoissonSampledDpEvent(0.1, E.GaussianDpEvent(1.0)),
            "substitution",
            "PoissonSampledDpEvent at root is not supported under substitution",
        ),
        (
            E.SampledWithoutReplacementDpEvent(10, 2, E.GaussianDpEvent(1.0)),
            "add_remove",
            "under substitution only",
        ),
        (
            E.PoissonSampledDpEvent(0.1, E.ComposedDpEvent([E.GaussianDpEvent(1.0), E.LaplaceDpEvent(1.0)])),
            "add_remove",
            r"root\.event: sampling a composition",
        ),
        (
            E.SampledWithoutReplacementDpEvent(10, 20, E.GaussianDpEvent(1.0)),
            "substitution",
            r"root\.sample_size must be an integer in \[0, 10\], got 20",
        ),
        (
            E.SelfComposedDpEvent(E.GaussianDpEvent(1.0), -1),
            "add_remove",
            r"root\.count must be an integer >= 0, got -1",
        ),
        (
            E.PoissonSampledDpEvent(1.5, E.GaussianDpEvent(1.0)),
            "add_remove",
            r"root\.sampling_probability must be in \[0, 1\], got 1\.5",
        ),
        (
            E.DiscreteLaplaceDpEvent(0.0, 1),
            "add_remove",
            r"root\.noise_parameter must be in \(0, inf\), got 0\.0",
        ),
        (
            E.GaussianDpEvent(float("nan")),
            "add_remove",
            r"root\.noise_multiplier must be a real number, got nan",
        ),
    ],
)
def test_unsupported_and_invalid_events_name_the_node(event: Any, relation: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        from_dp_event(event, neighbouring=relation)


@pytest.mark.parametrize(
    ("node", "message"),
    [
        ([1, 2], "root must be a DpEvent"),
        ({"noise_multiplier": 1.0}, "string 'class_name'"),
        (
            {"class_name": "GaussDpEvent", "noise_multiplier": 1.0},
            "root: unknown event class_name 'GaussDpEvent'",
        ),
        ({"class_name": "GaussianDpEvent"}, r"root: GaussianDpEvent needs field\(s\) \['noise_multiplier'\]"),
        (
            {"class_name": "GaussianDpEvent", "noise_multiplier": 1.0, "sigma": 2},
            r"unknown field\(s\) \['sigma'\]",
        ),
        (
            {"class_name": "ComposedDpEvent", "events": {"class_name": "NoOpDpEvent"}},
            r"root\.events must be a list",
        ),
        (
            {
                "class_name": "ComposedDpEvent",
                "events": [
                    {"class_name": "NoOpDpEvent"},
                    {"class_name": "LaplaceDpEvent", "noise_multiplier": True},
                ],
            },
            r"root\.events\[1\]\.noise_multiplier must be a real number, got True",
        ),
        (
            {"class_name": "SelfComposedDpEvent", "event": {"class_name": "NoOpDpEvent"}, "count": 2.0},
            r"root\.count must be an integer",
        ),
    ],
)
def test_malformed_json_names_the_node(node: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        from_dp_event(node)


def test_bad_neighbouring() -> None:
    with pytest.raises(ValueError, match="neighbouring must be one of"):
        from_dp_event(E.NoOpDpEvent(), neighbouring="replace")
    assert from_dp_event(E.NoOpDpEvent(), neighbouring=NR.REPLACE_SPECIAL).neighbouring == "zero_out"


def test_result_type_and_lazy_import() -> None:
    assert isinstance(from_dp_event(E.NoOpDpEvent()), EventComposition)
    code = "import sys, optcomp.interop, optcomp.cli; print('dp_accounting' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_engine_label_is_the_floors_decision() -> None:
    """The label is read from the queries floor (Gaussians only: gdp; black boxes: optimal; else grid)."""
    gaussians = from_dp_event(E.ComposedDpEvent([E.GaussianDpEvent(2.0), E.GaussianDpEvent(3.0)]))
    assert gaussians.engine == "gdp" == compose(*gaussians.items).engine()
    boxes = from_dp_event({"class_name": "SelfComposedDpEvent", "count": 3,
                           "event": {"class_name": "EpsilonDeltaDpEvent", "epsilon": 0.5, "delta": 1e-6}})
    assert boxes.engine == "optimal" == compose(*boxes.items).engine()
    sampled = from_dp_event(E.PoissonSampledDpEvent(0.01, E.GaussianDpEvent(1.0)))
    assert sampled.engine == "grid" == compose(*sampled.items).engine()
