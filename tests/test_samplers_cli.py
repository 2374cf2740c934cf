"""``optcomp dpsgd --sampling …``: the number, the relation in ``--json`` and ``--statement``, bad input."""

from __future__ import annotations

import json

import pytest

from optcomp import Accuracy, dpsgd
from optcomp.cli import main
from tests.tolerances import COARSE_GRID_STEP

ACCURACY = f"grid_step={COARSE_GRID_STEP}"
BASE = ("dpsgd", "--sigma", "1.0", "--q", "0.01", "--steps", "100", "--delta", "1e-5", "--accuracy", ACCURACY)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize(
    ("extra", "kwargs", "relation"),
    [
        (("--sampling", "fixed_size"), {"sampling": "fixed_size"}, "substitution"),
        (("--examples-per-user", "3"), {"examples_per_user": 3}, "add_remove_user"),
        (
            ("--sampling", "truncated_poisson", "--dataset-size", "10000", "--max-batch-size", "110"),
            {"sampling": "truncated_poisson", "dataset_size": 10_000, "max_batch_size": 110},
            "add_remove",
        ),
        (("--sampling", "shuffle"), {"sampling": "shuffle"}, "zero_out"),
        (("--sampling", "balls_in_bins"), {"sampling": "balls_in_bins"}, "add_remove"),
    ],
)
def test_json_carries_sampler_relation_and_library_bound(
    capsys: pytest.CaptureFixture[str], extra: tuple[str, ...], kwargs: dict[str, object], relation: str
) -> None:
    code, out, err = run(capsys, *BASE, *extra, "--json", "--statement")
    assert code == 0, err
    data = json.loads(out)
    bound = dpsgd.epsilon(1.0, 0.01, 100, 1e-5, accuracy=Accuracy(grid_step=COARSE_GRID_STEP), **kwargs)  # type: ignore[arg-type]
    assert data["relation"] == relation and data["epsilon"] == {"lower": bound.lower, "upper": bound.upper}
    assert "rdp_comparison" not in data  # the RDP comparator is for plain Poisson runs only
    text = " ".join(data["statement"].split())
    words = {"substitution": "substitution", "add_remove_user": "add/remove-one-user", "zero_out": "zero-out"}
    assert words.get(relation, "add/remove-one-record") in text


def test_shuffle_statement_names_both_ends(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, *BASE, "--sampling", "shuffle", "--statement")
    assert code == 0, err
    text = " ".join(out.split())
    assert "no amplification" in text and "at least" in text and "is not a guarantee for this run" in text


def test_balls_in_bins_statement_says_amplified(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, *BASE, "--sampling", "balls_in_bins", "--statement")
    assert code == 0, err
    text = " ".join(out.split())
    assert "certified, amplified upper bound" in text and "Lemma A" in text and "no amplification" not in text


@pytest.mark.parametrize(
    ("extra", "name"),
    [
        (("--sampling", "truncated_poisson"), "dataset_size"),
        (("--sampling", "shuffle", "--examples-per-user", "2"), "examples_per_user"),
        (("--examples-per-user", "0"), "--examples-per-user"),
        (("--dataset-size", "10"), "truncated_poisson"),
    ],
)
def test_bad_sampler_input_is_one_line_exit_2(
    capsys: pytest.CaptureFixture[str], extra: tuple[str, ...], name: str
) -> None:
    code, _, err = run(capsys, *BASE, *extra)
    assert code == 2 and name in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_truncated_poisson_lower_is_the_runs_at_the_issue_input(capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 27 C, its exact input (n = 60,000, q = 256/60,000, B = 300, σ = 1.1, T = 3,516, δ = 1e-5):
    ``lower`` is the run's certified lower end (the explicit pair's, about 1.13375), not the dominating
    pair's 2.38530, which travels under its own name in the JSON and on its own table row."""
    argv = ("dpsgd", "--sigma", "1.1", "--q", repr(256 / 60_000), "--steps", "3516", "--delta", "1e-5",
            "--sampling", "truncated_poisson", "--dataset-size", "60000", "--max-batch-size", "300")
    code, out, err = run(capsys, *argv, "--json")
    assert code == 0, err
    data = json.loads(out)
    kwargs: dict[str, object] = {"sampling": "truncated_poisson", "dataset_size": 60_000, "max_batch_size": 300}
    bound = dpsgd.epsilon(1.1, 256 / 60_000, 3516, 1e-5, **kwargs)  # type: ignore[arg-type]
    pair = dpsgd.epsilon_brackets(1.1, 256 / 60_000, 3516, 1e-5, **kwargs)[1]  # type: ignore[arg-type]
    assert data["epsilon"] == {"lower": bound.lower, "upper": bound.upper}
    assert data["dominating_pair_epsilon"] == {"lower": pair.lower, "upper": pair.upper}
    assert 1.13 < bound.lower < 1.14 and 2.385 < pair.lower <= bound.upper == pair.upper < 2.386
    code, out, err = run(capsys, *argv)
    assert code == 0, err
    run_row = next(line for line in out.splitlines() if "the run" in line)
    assert "1.1337" in run_row and "2.3853" in run_row and "dominating pair" in out


def test_account_with_a_truncated_poisson_step_reports_the_runs_lower_end(capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 27 C audit: ``account --mech TruncatedPoissonGaussian:…`` composes the dominating pair for the
    upper end and the explicit pair (other gradients 0) for the lower end, as ``dpsgd.epsilon`` does."""
    mech = "TruncatedPoissonGaussian:sigma=1,dataset_size=1000,sampling_rate=0.01,max_batch_size=12,count=30"
    code, out, err = run(capsys, "account", "--mech", mech, "--delta", "1e-5", "--accuracy", ACCURACY, "--json")
    assert code == 0, err
    row = json.loads(out)["results"][0]
    kwargs: dict[str, object] = {"sampling": "truncated_poisson", "dataset_size": 1000, "max_batch_size": 12}
    bound = dpsgd.epsilon(1.0, 0.01, 30, 1e-5, accuracy=Accuracy(grid_step=COARSE_GRID_STEP), **kwargs)  # type: ignore[arg-type]
    assert (row["lower"], row["upper"]) == (bound.lower, bound.upper)
