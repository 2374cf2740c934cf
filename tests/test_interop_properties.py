"""Properties of the DpEvent reader and writer over random trees (no engine call: fast)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from optcomp.interop import from_dp_event, to_dp_event_json

POSITIVE = st.floats(min_value=0.05, max_value=50.0, allow_nan=False)
RATE = st.floats(min_value=0.001, max_value=0.999, allow_nan=False)


def leaves(substitution: bool) -> st.SearchStrategy[dict[str, Any]]:
    base: list[st.SearchStrategy[dict[str, Any]]] = [
        st.builds(lambda z: {"class_name": "GaussianDpEvent", "noise_multiplier": z}, POSITIVE),
        st.builds(lambda s: {"class_name": "LaplaceDpEvent", "noise_multiplier": s}, POSITIVE),
        st.builds(
            lambda a, c: {"class_name": "DiscreteLaplaceDpEvent", "noise_parameter": a, "sensitivity": c},
            st.sampled_from([0.125, 0.25, 0.5, 1.0, 2.0]),
            st.integers(1, 4),
        ),
        st.builds(
            lambda e, d: {"class_name": "EpsilonDeltaDpEvent", "epsilon": e, "delta": d},
            POSITIVE,
            st.sampled_from([0.0, 0.5, 2.0**-20]),
        ),
        st.just({"class_name": "NoOpDpEvent"}),
    ]
    if substitution:
        base.append(
            st.builds(
                lambda n, m: {
                    "class_name": "SampledWithoutReplacementDpEvent",
                    "source_dataset_size": n,
                    "sample_size": m,
                    "event": {"class_name": "GaussianDpEvent", "noise_multiplier": 1.0},
                },
                st.integers(2, 10_000),
                st.integers(1, 1),
            )
        )
    else:
        base.append(
            st.builds(
                lambda q, z: {
                    "class_name": "PoissonSampledDpEvent",
                    "sampling_probability": q,
                    "event": {"class_name": "GaussianDpEvent", "noise_multiplier": z},
                },
                RATE,
                POSITIVE,
            )
        )
    return st.one_of(base)


def trees(substitution: bool) -> st.SearchStrategy[dict[str, Any]]:
    return st.recursive(
        leaves(substitution),
        lambda children: st.one_of(
            st.builds(
                lambda e, k: {"class_name": "SelfComposedDpEvent", "event": e, "count": k},
                children,
                st.integers(0, 5),
            ),
            st.builds(
                lambda es: {"class_name": "ComposedDpEvent", "events": es}, st.lists(children, max_size=4)
            ),
        ),
        max_leaves=8,
    )


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_export_then_read_is_the_identity_on_items(data: st.DataObject) -> None:
    """Reading a tree, writing its composition and reading that again gives the same items."""
    neighbouring = data.draw(st.sampled_from(["add_remove", "substitution"]))
    tree = data.draw(trees(neighbouring == "substitution"))
    first = from_dp_event(tree, neighbouring=neighbouring)
    written = json.loads(json.dumps(first.to_dp_event_json()))
    second = from_dp_event(written, neighbouring=neighbouring)
    assert second.items == first.items
    assert second.to_dp_event_json() == written
    assert to_dp_event_json(*first.items, neighbouring=neighbouring) == written


@settings(max_examples=60, deadline=None)
@given(trees(False), st.integers(1, 4))
def test_self_composition_multiplies_counts(tree: dict[str, Any], k: int) -> None:
    single = from_dp_event(tree)
    repeated = from_dp_event({"class_name": "SelfComposedDpEvent", "event": tree, "count": k})
    assert repeated.items == tuple((m, c * k) for m, c in single.items)
    listed = from_dp_event({"class_name": "ComposedDpEvent", "events": [tree] * k})
    assert listed.items == repeated.items
