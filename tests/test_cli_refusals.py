"""Issue 27 items 10–12: ambiguous specs and oversized parameters are refused in one line, up front.

In-process (``optcomp.cli.main``) with capsys; every refusal is one stderr line, exit status 2.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from optcomp import dpsgd
from optcomp.cli import main
from optcomp.pld import GridTooLargeError


def _run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    rc = main(args)
    captured = capsys.readouterr()
    return rc, captured.out, captured.err


def _refused(rc: int, out: str, err: str, *needles: str) -> None:
    assert rc == 2 and out == "", (rc, out[:200])
    assert err.startswith("optcomp: error: ") and err.count("\n") == 1, err
    for needle in needles:
        assert needle in err, (needle, err)


# --- item 10: a duplicated key is an error naming the parameter ------------------------------------


@pytest.mark.parametrize(
    ("mech", "needle"),
    [
        ("laplace:scale=1,scale=2", "'scale' is given twice"),
        ("epsdelta:eps=0.1,epsilon=0.2,delta=0", "'epsilon' is given twice"),
        ("gaussian:sigma=1,kind=laplace", "'kind' is given twice"),
        ("gaussian:sigma=1,count=2,count=3", "'count' is given twice"),
    ],
)
def test_duplicated_mech_key_is_refused(mech: str, needle: str, capsys: pytest.CaptureFixture[str]) -> None:
    _refused(*_run(["account", "--mech", mech, "--delta", "1e-5"], capsys), needle)


def test_duplicated_accuracy_key_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, err = _run(["account", "--mech", "gaussian:sigma=1", "--delta", "1e-5",
                         "--accuracy", "grid_step=1e-3,grid_step=1e-4"], capsys)
    _refused(rc, out, err, "--accuracy parameter 'grid_step' is given twice")


def test_duplicated_key_in_a_json_config_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "job.json"
    path.write_text('{"delta": 1e-5, "mechanisms": [{"kind": "laplace", "scale": 1, "scale": 2}]}', encoding="utf-8")
    _refused(*_run(["account", "--config", str(path)], capsys), "gives the key 'scale' twice")


def test_duplicated_key_in_a_toml_config_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "job.toml"
    path.write_text('delta = 1e-5\n[[mechanisms]]\nkind = "laplace"\nscale = 1\nscale = 2\n', encoding="utf-8")
    _refused(*_run(["account", "--config", str(path)], capsys), "not valid TOML")


def test_duplicated_key_in_a_dp_event_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "event.json"
    path.write_text('{"class_name": "GaussianDpEvent", "noise_multiplier": 1, "noise_multiplier": 9}', encoding="utf-8")
    _refused(*_run(["account", "--dp-event", str(path), "--delta", "1e-5"], capsys), "'noise_multiplier' twice")


# Issue 32, item 9: every KEY=VALUE spec string goes through the one parser (optcomp._numerics.parse_key_values),
# so a key given twice is refused wherever it is typed, never the last one taken silently.


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["matrix", "sensitivity", "--strategy", "tree:n=2000,n=3", "--pattern", "single"],
         "strategy parameter 'n' is given twice"),
        (["matrix", "sensitivity", "--strategy", "bsr:n=100,bands=4,bands=8", "--pattern", "single"],
         "strategy parameter 'bands' is given twice"),
        (["matrix", "sensitivity", "--strategy", "tree:n=2000", "--pattern", "min_separation:s=313,k=6,s=3"],
         "pattern parameter 's' is given twice"),
        (["matrix", "epsilon", "--strategy", "tree:n=2000", "--pattern", "min_sep:b=314,b=3", "--sigma", "7",
          "--delta", "1e-9"], "pattern parameter 'b' is given twice"),
        (["matrix", "bandmf", "--strategy", "bsr:n=2000,n=20,bands=64", "--cycle-length", "64", "--sampling-rate",
          "0.5", "--sigma", "6", "--delta", "1e-5"], "strategy parameter 'n' is given twice"),
        (["tradeoff", "--mech", "gaussian:sigma=1,sigma=2"], "'sigma' is given twice"),
        (["account", "--mech", "gaussian:sigma=1", "--delta", "1e-5", "--accuracy",
          "relative_width=1e-3,relative_width=1e-2"], "--accuracy parameter 'relative_width' is given twice"),
    ],
)
def test_duplicated_key_in_any_spec_string_is_refused(args: list[str], needle: str,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    _refused(*_run(args, capsys), needle)


def test_the_one_spec_parser() -> None:
    from optcomp import matrix
    from optcomp._keyvalues import parse_key_values

    assert parse_key_values("tree:n=2000, completion = 1,", "strategy") == ("tree", {"n": "2000", "completion": "1"})
    assert parse_key_values("grid_step=1e-3", "--accuracy", kind=False) == ("", {"grid_step": "1e-3"})
    for text in ("tree:n=2000,n=3", "tree:n=2000, n =3"):
        with pytest.raises(ValueError, match="'n' is given twice"):
            parse_key_values(text, "strategy")
    with pytest.raises(ValueError, match="KEY=VALUE"):
        parse_key_values("tree:n", "strategy")
    with pytest.raises(ValueError, match="'n' is given twice"):
        matrix.strategy_from_text("tree:n=2000,n=3")
    with pytest.raises(ValueError, match="'k' is given twice"):
        matrix.pattern_from_text("fixed_epoch:k=2,k=4")


def test_group_cost_advice_names_group(capsys: pytest.CaptureFixture[str]) -> None:
    """``tradeoff --group 1000000`` on a DP-SGD run: the exact group pair is one unit of g·k examples; the advice
    names --group (what the user typed), not --examples-per-user (which they did not)."""
    rc, out, err = _run(["tradeoff", "--sigma", "1", "--q", "0.01", "--steps", "100", "--group", "1000000"], capsys)
    _refused(rc, out, err, "--group 1000000", "use --group <=")
    assert "use --examples-per-user" not in err
    rc, out, err = _run(["tradeoff", "--sigma", "1", "--q", "0.01", "--steps", "100", "--group", "1000",
                         "--examples-per-user", "1000"], capsys)
    _refused(rc, out, err, "use --group <=", "at --examples-per-user 1000")
    rc, out, err = _run(["tradeoff", "--sigma", "1", "--q", "0.01", "--steps", "100",
                         "--examples-per-user", "1000000"], capsys)
    _refused(rc, out, err, "use --examples-per-user <=")


# --- item 11: sizes refused before anything is allocated -------------------------------------------


def test_examples_per_user_beyond_the_limits_is_refused_up_front(capsys: pytest.CaptureFixture[str]) -> None:
    # σ = 10⁶ keeps the run's loss small: only the size of the (10⁹ + 1)-component mixture is at stake.
    rc, out, err = _run(["dpsgd", "--sigma", "1e6", "--q", "0.001", "--steps", "100", "--delta", "1e-5",
                         "--examples-per-user", "1000000000"], capsys)
    _refused(rc, out, err, "--examples-per-user 1000000000", "use --examples-per-user <=")


def test_user_level_loss_beyond_any_grid_is_refused_without_accuracy_advice(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Mean loss ≥ T·(kq/σ)²/2 = 1000·100²/2 = 5e6 > MAX_MEAN_LOSS: refused before the mixture is built.
    rc, out, err = _run(["dpsgd", "--sigma", "1", "--q", "0.01", "--steps", "1000", "--delta", "1e-5",
                         "--examples-per-user", "10000"], capsys)
    _refused(rc, out, err, "mean at least 5e+06", "fewer examples per user")
    assert "--accuracy" not in err
    with pytest.raises(GridTooLargeError, match="examples_per_user=10000"):
        dpsgd.epsilon(1.0, 0.01, 1000, 1e-5, examples_per_user=10_000)


def test_user_level_mixture_law_is_evaluated_in_slices(monkeypatch: pytest.MonkeyPatch) -> None:
    """The law of a many-component mixture is the same whether its points are taken at once or in slices."""
    import numpy as np

    from optcomp.mechanisms import mixture

    law = mixture.MixtureGaussianLoss(mus=(0.5, 1.0, 2.0), log_weights=(-1.0, -2.0, -3.0), log_p0=-0.5)
    x = np.linspace(-0.4, 6.0, 257)
    whole = law.p_logsf(x), law.q_logcdf(x), law.z(x)
    monkeypatch.setattr(mixture, "_MAX_CELLS", 7)  # slices of 2 points
    sliced = law.p_logsf(x), law.q_logcdf(x), law.z(x)
    for a, b in zip(whole, sliced):
        assert np.array_equal(a, b)


# --- item 12: many distinct mechanisms are refused up front beyond the limits ------------------------


@pytest.mark.slow  # 10-12 s: make test-slow (keeps make test under 10 minutes on 2 cores)
def test_long_opacus_history_of_distinct_steps_is_refused_up_front(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    path = tmp_path / "history.json"
    path.write_text(json.dumps({"history": [[1.0 + i * 1e-4, 0.01, 1] for i in range(100_000)]}), encoding="utf-8")
    rc, out, err = _run(["account", "--opacus-history", str(path), "--delta", "1e-5"], capsys)
    _refused(rc, out, err, "composing 100000 distinct mechanisms", "use at most")
