"""Validation contract: bad input gets one clear ``ValueError`` (library) or one stderr line + exit 2 (CLI).

The message names the parameter and shows the value (``_numerics.check_*`` shape). NaN is never valid,
``bool`` is not an ``int``, nothing is clamped. Regressions found by the validation audit live here too.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import optcomp
from optcomp import bounds, calibrate, dpsgd, fdp, optimal, plot, region
from optcomp.cli import main
from optcomp.mechanisms import (
    EpsilonDelta,
    Gaussian,
    KaryRandomizedResponse,
    Laplace,
    PoissonSubsampled,
    PrivacyLossLaw,
    SubsampledWithoutReplacement,
)
from optcomp.pld import PrivacyLossDistribution

NAN, INF = math.nan, math.inf
NONNEG = [NAN, -1.0, INF]
PROB = [NAN, -0.1, 1.5, INF]
RATE = [NAN, 0.0, 1.1, -0.5]
POS = [NAN, 0.0, -1.0, INF]
INT = [2.5, True, 0, -3, 3.0, np.float64(3.0)]
COARSE = optcomp.Accuracy(grid_step=1e-2)
MECHS = [(0.1, 1e-6)] * 3


def _pld() -> PrivacyLossDistribution:
    return optcomp.compose(Laplace(scale=2.0), accuracy=COARSE)


#: (name in the message, call with the bad value, bad values)
CASES: list[tuple[str, Callable[[Any], object], list[Any]]] = [
    ("sigma", lambda v: Gaussian(sigma=v), POS),
    ("scale", lambda v: Laplace(scale=v), POS),
    ("epsilon", lambda v: EpsilonDelta(epsilon=v, delta=0.0), NONNEG),
    ("delta", lambda v: EpsilonDelta(epsilon=0.1, delta=v), PROB),
    ("k", lambda v: KaryRandomizedResponse(epsilon=1.0, k=v), [*INT, 1]),
    ("sampling_rate", lambda v: PoissonSubsampled(Gaussian(sigma=1.0), sampling_rate=v), RATE),
    ("sampling_rate", lambda v: SubsampledWithoutReplacement(Gaussian(sigma=1.0), sampling_rate=v), RATE),
    ("grid_step", lambda v: optcomp.Accuracy(grid_step=v), POS),
    ("count", lambda v: optcomp.compose((Gaussian(sigma=1.0), v), accuracy=COARSE), INT),
    ("delta", lambda v: optimal.epsilon(MECHS, v), PROB),
    ("epsilon", lambda v: optimal.delta(MECHS, v), [NAN, -1.0]),
    ("k", lambda v: optimal.homogeneous(0.1, 0.0, v), INT),
    ("mechanisms[0].delta", lambda v: optimal.epsilon([(0.1, v)], 1e-5), PROB),
    ("mechanisms", lambda v: optimal.epsilon([(v, 0.0)], 1e-5), ["0.1", None, True]),
    ("k", lambda v: bounds.kov_bound(0.1, 1e-6, v, 1e-6), INT),
    ("delta_slack", lambda v: bounds.advanced_drv(0.1, 1e-6, 3, v), PROB),
    ("k", lambda v: region.composed(0.1, 0.0, v), INT),
    ("epsilons[0]", lambda v: region.from_optimal(MECHS, [v]), NONNEG),
    ("alpha", lambda v: region.PrivacyRegion.from_dp(0.5, 0.01).contains(v, 0.5), PROB),
    ("mu", lambda v: fdp.gdp_delta(v, 1.0), [NAN, -1.0]),
    ("delta", lambda v: fdp.gdp_epsilon(1.0, v), PROB),
    ("k", lambda v: fdp.gdp_group(1.0, v), INT),
    ("k", lambda v: fdp.epsilon_delta_composition(0.5, 0.0, v), INT),
    ("n", lambda v: fdp.alpha_grid(v), [*INT, 1]),
    ("deltas[0]", lambda v: fdp.clt_epsilon_delta([0.1], [v]), PROB),
    ("epsilon", lambda v: fdp.epsilon_delta_tradeoff(1.0, 0.0).conjugate_delta(v), [NAN]),
    ("epsilon", lambda v: fdp.epsilon_delta_tradeoff(1.0, 0.0).delta(v), [NAN, -1.0]),
    ("fpr", lambda v: fdp.attack_tpr(fdp.gaussian_tradeoff(1.0), v), PROB),
    ("sampling_rate", lambda v: fdp.subsample(fdp.gaussian_tradeoff(1.0), v), RATE),
    ("steps", lambda v: fdp.noisy_sgd_mu_estimate(0.01, 1.0, v), INT),
    ("delta_lower", lambda v: fdp.from_delta_curve([0.0, 1.0], [v, 0.1], [0.2, 0.2]), PROB),
    ("epsilons", lambda v: fdp.from_delta_curve([v, 1.0], [0.1, 0.1], [0.2, 0.2]), [NAN, -1.0]),
    ("p", lambda v: PrivacyLossLaw.from_discrete(np.array([v, 0.5]), np.array([0.5, 0.5])), [NAN, -0.5, 1.5]),
    ("epsilon", lambda v: _pld().delta(v), [NAN, -1.0]),
    ("delta", lambda v: _pld().epsilon(v), PROB),
    ("k", lambda v: _pld().self_compose(v), INT),
    ("steps", lambda v: dpsgd.epsilon(1.0, 0.01, v, 1e-5, accuracy=COARSE), INT),
    ("sampling_rate", lambda v: dpsgd.epsilon(1.0, v, 10, 1e-5, accuracy=COARSE), RATE),
    ("noise_multiplier", lambda v: dpsgd.epsilon(v, 0.01, 10, 1e-5, accuracy=COARSE), POS),
    ("ks[0]", lambda v: plot.plot_privacy_region(0.1, 0.0, [v]), INT),
    ("epsilons[0]", lambda v: plot.plot_composition_comparison([v], 1e-5, 5), [NAN, -1.0, INF]),
    ("max_k", lambda v: plot.plot_composition_comparison([0.1], 1e-5, v), INT),
]


@pytest.mark.parametrize(
    ("name", "call", "value"),
    [pytest.param(n, c, v, id=f"{i}-{n}={v!r}") for i, (n, c, vs) in enumerate(CASES) for v in vs],
)
def test_bad_value_is_a_named_value_error(name: str, call: Callable[[Any], object], value: Any) -> None:
    with pytest.raises(ValueError, match="got") as info:
        call(value)
    assert name in str(info.value)


def test_epsilon_delta_tradeoff_at_infinite_epsilon_is_zero() -> None:
    # (∞, δ)-DP promises nothing: f = 0, not the perfectly private 1 − α of a dropped knot.
    f = fdp.epsilon_delta_tradeoff(INF, 0.1)
    assert f(0.5) == 0.0
    assert f.delta(1.0) == 1.0


def test_piecewise_delta_at_infinite_epsilon_is_the_mass_at_infinity() -> None:
    k, d = 3, 0.01
    f = fdp.epsilon_delta_composition(1.0, d, k)
    expected = -math.expm1(k * math.log1p(-d))
    assert f.delta(INF) == pytest.approx(expected)
    assert np.all(np.isfinite(f.conjugate_delta([0.5, INF])))


# ---------------------------------------------------------------------------------------------
# CLI: one stderr line, exit status 2, no traceback.
# ---------------------------------------------------------------------------------------------

_H = ["--eps", "0.1", "--delta", "0.001", "-k", "5"]
_S = ["--sigma", "1", "--q", "0.01", "--steps", "10", "--delta", "1e-5"]

CLI_BAD: list[list[str]] = [
    ["compose", "--eps", "nan", "--delta", "0.001", "-k", "5", "--target-delta", "1e-3"],
    ["compose", "--eps", "0.1", "--delta", "1.5", "-k", "5", "--target-delta", "1e-3"],
    ["compose", "--eps", "0.1", "--delta", "0.001", "-k", "2.5", "--target-delta", "1e-3"],
    ["compose", "--eps", "0.1", "--delta", "0.001", "-k", "0", "--target-delta", "1e-3"],
    ["compose", *_H, "--target-delta", "-1"],
    ["compose", *_H, "--target-eps", "nan"],
    ["compose", *_H, "--target-delta", "1e-3", "--tolerance", "0"],
    ["compose", *_H, "--target-delta", "1e-3", "--method", "bogus"],
    ["compose", *_H],
    ["compose", "--mech", "0.1", "--target-delta", "1e-3"],
    ["region", "--eps", "0.1", "--delta", "0", "-k", "3", "--points", "1"],
    ["region", "--mech", "0.1,0", "--eps-points", "0"],
    ["region", "--mech", "inf,0"],
    ["tradeoff", "--gdp", "-1"],
    ["tradeoff", "--gdp", "1", "--fpr", "1.5"],
    ["tradeoff", "--gdp", "1", "--subsample", "0"],
    ["tradeoff", "--eps", "1", "--delta", "nan"],
    ["tradeoff"],
    ["tradeoff", "--gdp", "1", "--points", "1000000000000"],  # MemoryError: one line, not a traceback
    ["dpsgd", "--sigma", "0", "--q", "0.01", "--steps", "10", "--delta", "1e-5"],
    ["dpsgd", "--sigma", "1", "--q", "1.1", "--steps", "10", "--delta", "1e-5"],
    ["dpsgd", "--sigma", "1", "--q", "0.01", "--steps", "0", "--delta", "1e-5"],
    ["dpsgd", *_S, "--accuracy", "grid_step=-1"],
    ["dpsgd", *_S, "--accuracy", "bogus=1"],
    ["dpsgd", "--sigma", "1"],
    ["account", "--mech", "gaussian:sigma=nan", "--delta", "1e-5"],
    ["account", "--mech", "gaussian:sigma=1,count=2.5", "--delta", "1e-5"],
    ["account", "--mech", "gaussian:sigma=1,q=0", "--delta", "1e-5"],
    ["account", "--mech", "bogus:x=1", "--delta", "1e-5"],
    ["account", "--mech", "gaussian:sigma=1", "--delta", "2"],
    ["account", "--mech", "gaussian:sigma=1"],
    ["plot", "region", "--eps", "-1", "--output", "x.png"],
    ["plot", "compare", "--delta-g", "0", "--output", "x.png"],
    ["plot", "region", "--eps", "0.1", "--output", "x.pdf"],
]


def _one_line_exit_2(capsys: pytest.CaptureFixture[str], args: list[str]) -> str:
    status = main(args)
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert status == 2, err
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


@pytest.mark.parametrize("args", CLI_BAD, ids=[" ".join(a) for a in CLI_BAD])
def test_cli_bad_argument_is_one_line_exit_2(capsys: pytest.CaptureFixture[str], args: list[str]) -> None:
    _one_line_exit_2(capsys, args)


@pytest.mark.parametrize(
    ("name", "content", "needle"),
    [
        ("null.json", "[[0.1, 0.0], [null, 1]]", "entry 1"),
        ("bool.json", "[[true, 0.0]]", "entry 0"),
        ("str.json", '[["a", 0.0]]', "entry 0"),
        ("bad.json", "{not json", "valid JSON"),
        ("binary.txt", b"\xff\xfe\x00", "UTF-8"),
        ("bad.txt", "0.1,abc\n", "line 1"),
        ("nan.txt", "nan,0\n", "epsilon"),
    ],
)
@pytest.mark.parametrize("command", ["compose", "region"])
def test_cli_malformed_file(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    command: str,
    name: str,
    content: str | bytes,
    needle: str,
) -> None:
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    extra = ["--target-delta", "1e-3"] if command == "compose" else []
    assert needle in _one_line_exit_2(capsys, [command, "--file", str(path), *extra])


@pytest.mark.parametrize(
    "args",
    [
        ["region", "--eps", "0.1", "--delta", "0", "-k", "3", "--output"],
        ["tradeoff", "--gdp", "1", "--output"],
    ],
)
def test_cli_unwritable_output(capsys: pytest.CaptureFixture[str], tmp_path: Path, args: list[str]) -> None:
    line = _one_line_exit_2(capsys, [*args, str(tmp_path / "missing" / "out.csv")])
    assert "missing" in line


@pytest.mark.parametrize(
    "command",
    [
        [],
        ["compose"],
        ["region"],
        ["account"],
        ["dpsgd"],
        ["tradeoff"],
        ["plot"],
        ["plot", "tradeoff"],
        ["plot", "region"],
        ["plot", "compare"],
    ],
)
def test_cli_help(capsys: pytest.CaptureFixture[str], command: list[str]) -> None:
    assert main([*command, "--help"]) == 0
    assert "Usage" in capsys.readouterr().out


@pytest.mark.parametrize(
    "args",
    [
        ["compose", *_H, "--target-delta", "1e-3", "--json"],
        ["compose", "--eps", "0.1", "--delta", "1", "-k", "3", "--target-delta", "1", "--json"],
        ["region", *_H, "--format", "json"],
        ["tradeoff", "--eps", "1", "--delta", "0.1", "-k", "3", "--json"],
        ["dpsgd", *_S, "--accuracy", "grid_step=0.01", "--json"],
        [
            "account",
            "--mech",
            "gaussian:sigma=1",
            "--delta",
            "1e-5",
            "--accuracy",
            "grid_step=0.01",
            "--json",
        ],
    ],
)
def test_cli_json_parses(capsys: pytest.CaptureFixture[str], args: list[str]) -> None:
    assert main(args) == 0
    json.loads(capsys.readouterr().out)


# ---------------------------------------------------------------------------------------------
# calibrate / account (after the 21:25 hand-over of those modules).
# ---------------------------------------------------------------------------------------------


def _one_over(noise: float) -> optcomp.Bound:
    return optcomp.Bound(1.0 / noise, 1.0 / noise)


@pytest.mark.parametrize(
    ("name", "kwargs"),
    [
        ("target", {"target": NAN}),
        ("target", {"target": -1.0}),
        ("target", {"target": INF}),
        ("rtol", {"target": 1.0, "rtol": 0.0}),
        ("rtol", {"target": 1.0, "rtol": NAN}),
        ("rtol", {"target": 1.0, "rtol": -1.0}),
        ("start", {"target": 1.0, "start": 0.0}),
        ("start", {"target": 1.0, "start": -1.0}),
        ("start", {"target": 1.0, "start": INF}),
    ],
)
def test_smallest_passing_noise_validates(name: str, kwargs: dict[str, float]) -> None:
    with pytest.raises(ValueError, match=name):
        calibrate.smallest_passing_noise(_one_over, **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("family", "noise_field", "match"),
    [(EpsilonDelta, None, "callable"), (Gaussian, "bogus", "noise_field")],
)
def test_noise_for_target_family_errors(family: type, noise_field: str | None, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        calibrate.noise_for_target(family, 1.0, 1e-5, 10, noise_field=noise_field, accuracy=COARSE)


@pytest.mark.parametrize(
    "mech",
    ["PrivacyLossLaw:p_inf=0.1", "ContinuousLoss", "privacy_loss_laws"],
)
def test_cli_account_kind_must_be_a_specification(capsys: pytest.CaptureFixture[str], mech: str) -> None:
    assert "kind" in _one_line_exit_2(capsys, ["account", "--mech", mech, "--delta", "1e-5"])


def test_cli_account_rejects_bad_query_before_composing(capsys: pytest.CaptureFixture[str]) -> None:
    # A default-accuracy composition of 10^6 steps would take long; the bad δ is reported first.
    line = _one_line_exit_2(capsys, ["account", "--mech", "laplace:scale=1,count=1000000", "--delta", "1.5"])
    assert "delta" in line


def test_cli_account_config_discrete_pair_keeps_its_q(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    cfg = tmp_path / "pair.json"
    cfg.write_text(
        json.dumps(
            {"delta": 1e-3, "mechanisms": [{"kind": "DiscretePair", "p": [0.6, 0.4], "q": [0.4, 0.6]}]}
        )
    )
    assert main(["account", "--config", str(cfg), "--accuracy", "grid_step=0.01", "--json"]) == 0
    json.loads(capsys.readouterr().out)


def test_cli_account_undecodable_config(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    cfg = tmp_path / "bin.json"
    cfg.write_bytes(b"\xff\xfe\x00")
    assert "UTF-8" in _one_line_exit_2(capsys, ["account", "--config", str(cfg)])
