"""Issue 27 item C's audit: a returned or printed ``lower`` (and a trade-off bracket's attack side) bounds the
quantity the user asked about, not the lower end of a bound on it (a dominating pair, a theorem's curve).

Each test checks the lower end against an independent truth: an exact pair that the stated quantity
includes (the exact group pair of a Poisson run), or the explicit dominated pair of a run.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from optcomp import DEFAULT_ACCURACY, Accuracy, Bound, dpsgd, fdp
from optcomp.cli import main
from optcomp.interop import from_dp_event
from tests.tolerances import COARSE_GRID_STEP

ACC = Accuracy(grid_step=COARSE_GRID_STEP)
ACC_OPTION = ("--accuracy", f"grid_step={COARSE_GRID_STEP}")
FPRS = (0.001, 0.01, 0.1)


def _json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, object]:
    rc = main([*argv, "--json"])
    out, err = capsys.readouterr()
    assert rc == 0 and err == "", err
    data = json.loads(out)
    assert isinstance(data, dict)
    return data


def test_group_of_a_bracket_keeps_the_attack_side_below_the_exact_group() -> None:
    """DRS Thm 2.14 on a run's bracket: its attack TPR lower end is at most the exact group pair's TPR.

    DP-SGD σ = 1, q = 0.1, 10 steps, group of 4: the exact group pair (Bin(4, q) mixture, attained by
    four aligned records) has TPR ≤ 0.23286 at FPR 1 %; Thm 2.14's image of the run's upper curve
    claimed ≥ 0.29626 (before this audit)."""
    one = dpsgd.tradeoff(1.0, 0.1, 10, accuracy=ACC)
    exact = dpsgd.tradeoff(1.0, 0.1, 10, examples_per_user=4, accuracy=ACC)
    grouped = fdp.group_privacy(one, 4)
    for fpr in FPRS:
        claimed, truth = fdp.attack_tpr(grouped, fpr), fdp.attack_tpr(exact, fpr)
        assert claimed.lower <= truth.upper, (fpr, claimed, truth)
        assert truth.lower <= claimed.upper, (fpr, claimed, truth)  # the guarantee side still holds


def test_cli_group_through_thm_2_14_is_below_the_exact_group(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``tradeoff --dp-event … --group 4`` (read as a PLD: Thm 2.14) against ``--sigma … --group 4`` (exact)."""
    event = {"class_name": "SelfComposedDpEvent", "count": 10,
             "event": {"class_name": "PoissonSampledDpEvent", "sampling_probability": 0.1,
                       "event": {"class_name": "GaussianDpEvent", "noise_multiplier": 1.0}}}
    path = tmp_path / "event.json"
    path.write_text(json.dumps(event), encoding="utf-8")
    bound = _json(capsys, "tradeoff", "--dp-event", str(path), "--group", "4", "--points", "3", *ACC_OPTION)
    exact = _json(capsys, "tradeoff", "--sigma", "1", "--q", "0.1", "--steps", "10", "--group", "4",
                  "--points", "3", *ACC_OPTION)
    assert bound["group"] == {"size": 4, "route": "drs_thm_2_14"}
    assert exact["group"] == {"size": 4, "route": "exact_pair"}
    claimed, truth = bound["attack_tpr"], exact["attack_tpr"]
    assert isinstance(claimed, dict) and isinstance(truth, dict)
    assert claimed["lower"] <= truth["upper"] and truth["lower"] <= claimed["upper"]


def test_tradeoff_of_a_truncated_poisson_event_takes_the_attack_side_from_the_explicit_pair(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The dominating pair's upper curve is not the run's: the attack TPR's lower end is the explicit pair's."""
    step = {"class_name": "TruncatedSubsampledGaussianDpEvent", "dataset_size": 1000,
            "sampling_probability": 0.01, "truncated_batch_size": 12, "noise_multiplier": 1.0}
    event = {"class_name": "SelfComposedDpEvent", "count": 50, "event": step}
    path = tmp_path / "event.json"
    path.write_text(json.dumps(event), encoding="utf-8")
    data = _json(capsys, "tradeoff", "--dp-event", str(path), "--points", "3", "--fpr", "0.01", *ACC_OPTION)
    composition = from_dp_event(event)
    explicit = fdp.from_pld(composition.dominated_pld(accuracy=ACC))
    dominating = fdp.from_pld(composition.pld(accuracy=ACC))
    run_lower = fdp.attack_tpr(explicit, 0.01).lower  # a certified lower end of the run's TPR
    pair = fdp.attack_tpr(dominating, 0.01)
    printed = data["attack_tpr"]
    assert isinstance(printed, dict)
    assert printed == {"lower": run_lower, "upper": pair.upper}
    assert run_lower < pair.lower  # the dominating pair's lower end was printed before (0.02438 vs 0.01348)


def test_fixed_size_lower_end_is_the_attained_pairs() -> None:
    """Fixed-size DP-SGD (substitution), T > 1: the symmetrized step law dominates each step, but its T-fold
    composition is not shown attained; the run's lower end is that of the pairs an adversary attains
    (every other record equal to the replaced one, one direction throughout: ``PoissonSubsampled(Gaussian(σ,
    2), q)`` composed, the larger direction). σ = 1, q = 0.01, T = 1000, δ = 1e-5: the symmetrized
    composition's lower end 14.820 was printed as the run's, the attained pairs certify ε ≤ 13.362."""
    from optcomp import Gaussian, PoissonSubsampled, compose

    run, pair = dpsgd.epsilon_brackets(1.0, 0.01, 1000, 1e-5, sampling="fixed_size", accuracy=ACC)
    attained = compose((PoissonSubsampled(Gaussian(1.0, sensitivity=2.0), sampling_rate=0.01), 1000), accuracy=ACC)
    truth = attained.epsilon(1e-5)
    assert run.lower <= truth.upper < pair.lower  # the dominating pair's lower end is above what is attained
    assert run.upper == pair.upper
    curve = dpsgd.tradeoff(1.0, 0.01, 1000, sampling="fixed_size", accuracy=ACC)
    for fpr in FPRS:  # the attack side: at most what the attained pairs' attack certainly achieves
        assert fdp.attack_tpr(curve, fpr).lower <= fdp.attack_tpr(fdp.from_pld(attained), fpr).upper


def test_fixed_size_dp_event_lower_end_is_the_attained_pairs() -> None:
    """The same run read from dp_accounting's ``SampledWithoutReplacementDpEvent`` (replace-one)."""
    event = {"class_name": "SelfComposedDpEvent", "count": 200,
             "event": {"class_name": "SampledWithoutReplacementDpEvent", "source_dataset_size": 10000,
                       "sample_size": 100, "event": {"class_name": "GaussianDpEvent", "noise_multiplier": 1.0}}}
    bound = from_dp_event(event, neighbouring="substitution").epsilon(1e-5, accuracy=ACC)
    assert bound == dpsgd.epsilon(1.0, 0.01, 200, 1e-5, sampling="fixed_size", accuracy=ACC)


def test_bandmf_hidden_partition_lower_end_is_not_the_revealed_mechanisms() -> None:
    """Hidden partition: the revealed-partition mechanism dominates the run, so its lower end is carried
    under its own name (``revealed_epsilon``) and the run's is 0; a public partition keeps both ends."""
    from optcomp import matrix

    s = matrix.bsr(64, 8)
    kw = {"cycle_length": 8, "sampling_rate": 0.3, "noise_multiplier": 2.0}
    hidden, public = matrix.bandmf(s, **kw), matrix.bandmf(s, partition_public=True, **kw)
    revealed = hidden.revealed_epsilon(1e-5)
    assert hidden.epsilon(1e-5) == Bound(0.0, revealed.upper) and 0.0 < revealed.lower
    assert hidden.delta(1.0) == Bound(0.0, hidden.revealed_delta(1.0).upper)
    assert public.epsilon(1e-5) == public.revealed_epsilon(1e-5)


def test_bandmf_truncated_lower_end_is_the_explicit_pairs() -> None:
    """Truncated-Poisson blocks: the lower end composes the explicit pair, not the dominating law."""
    from optcomp import compose, matrix
    from optcomp.mechanisms.truncated import dominated_counterpart

    s = matrix.bsr(64, 8)
    run = matrix.bandmf(s, cycle_length=8, sampling_rate=0.3, noise_multiplier=2.0, group_size=100,
                        max_batch_size=35, partition_public=True)
    bound = run.epsilon(1e-5)
    dominating = max(c.epsilon(1e-5).lower for c in run.compositions("upper", DEFAULT_ACCURACY))
    explicit = []
    for c in run.compositions("upper", DEFAULT_ACCURACY):  # the same blocks, each step its explicit pair
        explicit.append(compose(*((dominated_counterpart(m), k) for m, k in c.items)).epsilon(1e-5).upper)
    assert bound.lower <= max(explicit) and bound.lower < dominating <= bound.upper


def test_tradeoff_subsampled_gdp_run_attack_side_is_the_attained_pairs(capsys: pytest.CaptureFixture[str]) -> None:
    """``tradeoff --gdp μ --subsample p -k k``: C_p(G_μ)^{⊗k} only dominates the run (the symmetrized step);
    its attack TPR's lower end is the attained one-direction pairs' (every other record equal to x)."""
    from optcomp import Gaussian, PoissonSubsampled, compose

    data = _json(capsys, "tradeoff", "--gdp", "1", "--subsample", "0.1", "-k", "50", "--points", "3")
    attained = fdp.from_pld(compose((PoissonSubsampled(Gaussian(1.0), sampling_rate=0.1), 50)).pld())
    printed = data["attack_tpr"]
    assert isinstance(printed, dict)
    assert printed["lower"] <= fdp.attack_tpr(attained, 0.01).upper
