"""Interop safety (issue 35 item 3): where a peer's number for a description is no guarantee for the run the
user describes, the reading carries a one-line PeerWarning (and a Python warning) and the CLI prints it beside
optcomp's certified bracket. Each case on the peer's own event."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import pytest

import optcomp
from optcomp.cli import main
from optcomp.interop import PeerUnderReportWarning, from_dp_event, from_opacus_history, to_dp_event_json
from optcomp.mechanisms import DiscreteGaussian, Gaussian, PoissonSubsampled

dp = pytest.importorskip("dp_accounting")
E = dp.dp_event
REPLACE_ONE = dp.NeighboringRelation.REPLACE_ONE

#: The issue's run: m = 256 of n = 60,000, σ = 1, 3,516 steps, δ = 1e-5.
N, M, SIGMA, STEPS, DELTA = 60_000, 256, 1.0, 3516, 1e-5
#: optcomp's certified bracket for it with fixed-size batches under replace-one (issue 35, docs/interop.md §8).
FIXED_SIZE_BRACKET = (11.0417, 12.4824)


def _bracket_matches(b: optcomp.Bound) -> None:
    assert round(b.lower, 4) == FIXED_SIZE_BRACKET[0] and round(b.upper, 4) == FIXED_SIZE_BRACKET[1], b


def test_poisson_event_under_replace_one_read_as_fixed_size_batches() -> None:
    """dp_accounting's PLDAccountant reads the event as Poisson sampling (2.21); the fixed-size run is ≥ 11.04."""
    event = E.SelfComposedDpEvent(E.PoissonSampledDpEvent(M / N, E.GaussianDpEvent(SIGMA)), STEPS)
    with pytest.warns(PeerUnderReportWarning, match="PLDAccountant reads the PoissonSampledDpEvent at root.event"):
        c = from_dp_event(event, neighbouring=REPLACE_ONE, sampling="fixed_size")
    (w,) = c.warnings
    assert w.peer == "dp_accounting PLDAccountant" and w.path == "root.event" and "\n" not in w.message
    b = c.epsilon(DELTA)
    _bracket_matches(b)
    peer = dp.pld.PLDAccountant(REPLACE_ONE)
    peer.compose(event)
    theirs = peer.get_epsilon(DELTA)
    assert round(theirs, 2) == 2.21 and theirs < b.lower


def test_poisson_event_under_replace_one_without_a_stated_sampler_is_refused_pointing_to_fixed_size() -> None:
    event = E.PoissonSampledDpEvent(M / N, E.GaussianDpEvent(SIGMA))
    with pytest.raises(ValueError, match="sampling='fixed_size'"):
        from_dp_event(event, neighbouring=REPLACE_ONE)
    with pytest.raises(ValueError, match="neighbouring='substitution'"):
        from_dp_event(event, neighbouring="add_remove", sampling="fixed_size")
    with pytest.raises(ValueError, match="sampling must be one of"):
        from_dp_event(event, neighbouring="add_remove", sampling="shuffled")  # type: ignore[arg-type]


def test_sampled_without_replacement_under_replace_one() -> None:
    """dp_accounting's RdpAccountant (its PLD accountant refuses the event) under-reports: 2.70 < 11.04."""
    event = E.SelfComposedDpEvent(E.SampledWithoutReplacementDpEvent(N, M, E.GaussianDpEvent(SIGMA)), STEPS)
    with pytest.warns(PeerUnderReportWarning, match="RdpAccountant answers the SampledWithoutReplacementDpEvent"):
        c = from_dp_event(event, neighbouring=REPLACE_ONE)
    assert [w.peer for w in c.warnings] == ["dp_accounting RdpAccountant"]
    b = c.epsilon(DELTA)
    _bracket_matches(b)
    peer = dp.rdp.RdpAccountant(neighboring_relation=REPLACE_ONE)
    peer.compose(event)
    assert peer.get_epsilon(DELTA) < b.lower
    assert not dp.pld.PLDAccountant(REPLACE_ONE).supports(event)


def test_opacus_history_with_fixed_size_batches() -> None:
    """Opacus' accountants assume Poisson batches under add/remove; their RDP number (dp_accounting's, the
    same formulas) is far below the fixed-size run's certified ε under replace-one."""
    history = [(SIGMA, M / N, STEPS)]
    with pytest.warns(PeerUnderReportWarning, match="Opacus accountants"):
        c = from_opacus_history(history, sampling="fixed_size")
    assert c.neighbouring == "substitution" and [w.peer for w in c.warnings] == ["Opacus accountant"]
    _bracket_matches(c.epsilon(DELTA))
    rdp = dp.rdp.RdpAccountant()
    rdp.compose(E.SelfComposedDpEvent(E.PoissonSampledDpEvent(M / N, E.GaussianDpEvent(SIGMA)), STEPS))
    assert rdp.get_epsilon(DELTA) < c.epsilon(DELTA).lower
    with warnings.catch_warnings():
        warnings.simplefilter("error", PeerUnderReportWarning)
        assert from_opacus_history(history).warnings == ()  # Poisson batches, as Opacus assumes: no warning


#: dp_accounting's DiscreteGaussianDpEvent (its source after the 0.6.0 release, python/dp_accounting/dp_accounting/
#: dp_event.py: sigma, sensitivity=1.0, dimension=None), in its to_named_tuple() / JSON spelling (0.6.0 has none).
def _dgauss(sigma: float, sensitivity: float = 1.0, dimension: int | None = None) -> dict[str, Any]:
    return {"class_name": "DiscreteGaussianDpEvent", "sigma": sigma, "sensitivity": sensitivity, "dimension": dimension}


def test_sampled_discrete_gaussian_is_not_the_sampled_gaussian() -> None:
    """dp_accounting (source after 0.6.0) replaces a sampled discrete Gaussian by the Gaussian of noise multiplier σ/Δ; the
    exact sampled discrete Gaussian lies above that Gaussian's exact value (q = 0.99, σ = 1, 10 steps)."""
    event = {"class_name": "SelfComposedDpEvent", "count": 10,
             "event": {"class_name": "PoissonSampledDpEvent", "sampling_probability": 0.99, "event": _dgauss(1.0)}}
    with pytest.warns(PeerUnderReportWarning, match="replaces the sampled DiscreteGaussianDpEvent at root.event.event"):
        c = from_dp_event(event)
    dg = c.epsilon(1e-6)
    proxy = optcomp.compose((PoissonSubsampled(Gaussian(1.0), sampling_rate=0.99), 10)).epsilon(1e-6)
    assert proxy.upper < dg.lower


def test_sampled_discrete_gaussian_warning_matches_the_installed_peer() -> None:
    """The warning's claim, pinned against the installed dp_accounting: where it has ``DiscreteGaussianDpEvent``
    (its source after 0.6.0), its RdpAccountant's number for the sampled event is the sampled Gaussian's of
    noise multiplier σ/Δ; where it has none (0.6.0), its RdpAccountant refuses a sampled ZCDpEvent (so the
    event can only be handed over as that Gaussian). No accountant option is named (0.6.0 has no accept_zcdp)."""
    import inspect

    rdp = dp.rdp.RdpAccountant
    assert "accept_zcdp" not in inspect.signature(rdp.__init__).parameters
    event = {"class_name": "PoissonSampledDpEvent", "sampling_probability": 0.5, "event": _dgauss(2.0, 1.0, 1)}
    with pytest.warns(PeerUnderReportWarning) as caught:
        from_dp_event(event)
    message = str(caught[0].message)
    assert "0.6.0 has no such event" in message and "accept_zcdp" not in message
    if hasattr(E, "DiscreteGaussianDpEvent"):
        got, proxy = rdp(), rdp()
        got.compose(E.PoissonSampledDpEvent(0.5, E.DiscreteGaussianDpEvent(2.0, 1.0, 1)))
        proxy.compose(E.PoissonSampledDpEvent(0.5, E.GaussianDpEvent(2.0)))
        assert got.get_epsilon(1e-6) == proxy.get_epsilon(1e-6)
    else:
        assert not rdp().supports(E.PoissonSampledDpEvent(0.5, E.ZCDpEvent(0.125)))
        assert rdp().supports(E.ZCDpEvent(0.125))


def test_discrete_gaussian_event_reading() -> None:
    """Unsampled: the exact lattice bracket, no warning (the peer's RDP accountant uses ρ = Δ²/(2σ²) zCDP, a valid
    bound); dimension and sensitivity as the event states them; the worst shift refused where undetermined."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", PeerUnderReportWarning)
        c = from_dp_event({"class_name": "SelfComposedDpEvent", "count": 10, "event": _dgauss(1.0, 1.0, 1)},
                          neighbouring="substitution")
    assert c.engine == "lattice" and round(c.epsilon(1e-6).upper, 2) == 19.49
    assert from_dp_event({"class_name": "DiscreteGaussianDpEvent", "sigma": 1.0}).items == (
        (DiscreteGaussian(1.0, sensitivity=1.0, dimension=None), 1),)  # JSON defaults: Δ = 1, dimension unknown
    with pytest.raises(ValueError, match=r"root: the worst integer shift .* \(2,\) and \(1, 1\)"):
        from_dp_event(_dgauss(1.0, 2.0, None))
    assert from_dp_event(_dgauss(1.0, 0.5, 3)).empty  # no non-zero integer shift within 0.5
    assert not from_dp_event(_dgauss(0.0, 1.0, 1)).private
    with pytest.raises(ValueError, match=r"root\.dimension must be an integer >= 1 or null"):
        from_dp_event(_dgauss(1.0, 1.0, 0))


def test_discrete_gaussian_round_trip() -> None:
    """A shift vector is written as the composition of its coordinates' 1-dimensional events (the same law)."""
    mech = DiscreteGaussian(1.5, shift=(3, 4))
    written = to_dp_event_json((mech, 2))
    back = from_dp_event(written)
    a = optcomp.compose((mech, 2)).epsilon(1e-6)
    b = back.epsilon(1e-6)
    assert a.lower <= b.upper and b.lower <= a.upper


def test_cli_prints_the_warning_beside_the_bracket_and_the_peer(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The issue's case on the command line: the bracket [11.0417, 12.4824], one WARNING line, and
    dp_accounting's 2.20669 placed below the bracket."""
    path = tmp_path / "run.json"
    path.write_text(json.dumps(to_dp_event_json((PoissonSubsampled(Gaussian(SIGMA), sampling_rate=M / N), STEPS))))
    code = main(["account", "--dp-event", str(path), "--neighbouring", "substitution", "--sampling", "fixed_size",
                 "--delta", str(DELTA)])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "11.0417" in out and "12.4824" in out
    warning_lines = [line for line in out.splitlines() if line.startswith("WARNING:")]
    assert len(warning_lines) == 1 and "PLDAccountant" in warning_lines[0]
    assert "2.20669, below our certified bracket [11.0417, 12.4824]" in out
    code = main(["account", "--dp-event", str(path), "--neighbouring", "substitution", "--sampling", "fixed_size",
                 "--delta", str(DELTA), "--json"])
    data = json.loads(capsys.readouterr().out)
    assert [w["peer"] for w in data["warnings"]] == ["dp_accounting PLDAccountant"]


def test_cli_refuses_poisson_under_substitution_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "run.json"
    path.write_text(json.dumps({"class_name": "PoissonSampledDpEvent", "sampling_probability": 0.01,
                                "event": {"class_name": "GaussianDpEvent", "noise_multiplier": 1.0}}))
    code = main(["account", "--dp-event", str(path), "--neighbouring", "substitution", "--delta", "1e-5"])
    _, err = capsys.readouterr()
    assert code == 2 and err.count("\n") == 1 and "--sampling fixed_size" in err
