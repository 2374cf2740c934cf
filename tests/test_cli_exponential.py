"""``--mech exponential:epsilon=…,count=…`` in ``optcomp account`` and ``optcomp compose`` (issue 34, item 4).

``account`` composes the steps as bounded-range (the adaptive recursion); ``compose`` compares the
theorems on them as ε-DP boxes and adds the bounded-range row. One run is a real process (the path a
user types; ``make test-slow``); the rest go through ``optcomp.cli.main``.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import optcomp as oc
from optcomp import optimal
from optcomp.cli import main


def _json(capsys: pytest.CaptureFixture[str], args: list[str]) -> dict:  # type: ignore[type-arg]
    assert main(args) == 0
    return json.loads(capsys.readouterr().out)  # type: ignore[no-any-return]


@pytest.mark.slow  # a fresh interpreter: 1-8 s on a loaded 2-core machine
def test_account_composes_exponential_steps_as_bounded_range() -> None:
    script = "import sys; from optcomp.cli import main; sys.exit(main(sys.argv[1:]))"
    out = subprocess.run([sys.executable, "-c", script, "--no-progress", "account", "--mech",
                          "exponential:epsilon=0.1,count=100", "--delta", "1e-6", "--json"],
                         capture_output=True, text=True, timeout=120, check=False)
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)["results"][0]
    want = oc.compose((oc.ExponentialMechanism(0.1), 100)).epsilon(1e-6)
    assert (got["lower"], got["upper"]) == pytest.approx((want.lower, want.upper), rel=1e-12)
    assert 2.2 < got["lower"] <= got["upper"] < 2.26  # README: [2.250792, 2.250981]


def test_compose_adds_the_bounded_range_row(capsys: pytest.CaptureFixture[str]) -> None:
    data = _json(capsys, ["compose", "--mech", "exponential:eps=0.1,count=50", "--target-delta", "1e-6", "--json"])
    assert data["k"] == 50
    pure = optimal.epsilon(optimal.homogeneous(0.1, 0.0, 50), 1e-6)
    assert data["epsilon"]["optimal"]["upper"] == pytest.approx(pure.upper)  # the theorems: ε-DP boxes
    br = data["epsilon"]["bounded_range_optimal"]
    assert br["upper"] < 0.5 * pure.upper and br["lower"] <= br["upper"]


def test_compose_mixes_pairs_and_named_boxes_in_order(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["compose", "--mech", "gumbel_max:eps=0.2,count=5", "--mech", "0.3,1e-7",
            "--mech", "permute_and_flip:eps=0.1,count=2", "--target-eps", "1.0", "--json"]
    data = _json(capsys, args)
    assert data["k"] == 8
    pairs = [(0.2, 0.0)] * 5 + [(0.3, 1e-7)] + [(0.1, 0.0)] * 2
    assert data["delta"]["optimal"]["upper"] == pytest.approx(optimal.delta(pairs, 1.0).upper)
    want = oc.compose((oc.BoundedRange(0.2), 5), (oc.EpsilonDelta(0.3, delta=1e-7), 1),
                      (oc.EpsilonDelta(0.1, delta=0.0), 2)).delta(1.0)
    assert data["delta"]["bounded_range_optimal"]["upper"] == pytest.approx(want.upper)
    assert data["delta"]["bounded_range_optimal"]["upper"] <= data["delta"]["optimal"]["upper"]
    # no bounded-range step: no such row
    data = _json(capsys, ["compose", "--mech", "permute_and_flip:eps=0.1,count=3", "--target-eps", "0.2", "--json"])
    assert "bounded_range_optimal" not in data["delta"]


@pytest.mark.parametrize(
    ("mech", "message"),
    [
        ("gaussian:sigma=1", "--mech of compose must be EPS,DELTA or an (epsilon, delta) black box"),
        ("exponential:epsilon=-1", "epsilon must be in (0, 500], got -1"),
        ("exponential:epsilon=0.1,count=2.5", "count must be an integer"),
        ("exponential:epsilon=0.1,colour=red", "parameters must be among"),
    ],
)
def test_compose_refuses_bad_named_boxes_in_one_line(capsys: pytest.CaptureFixture[str], mech: str,
                                                     message: str) -> None:
    assert main(["compose", "--mech", mech, "--target-delta", "1e-6"]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and "Traceback" not in err
