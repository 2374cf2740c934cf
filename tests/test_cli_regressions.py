"""The CLI never shows a traceback, a NaN answer, a table that lies by omission, minutes of silence or
rough help: each case run in-process through ``optcomp.cli.main``."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import pytest

from optcomp import bounds, optimal, region
from optcomp.cli import main
from tests.tolerances import EXACT_RTOL

pytestmark = pytest.mark.filterwarnings("error")  # a RuntimeWarning is a failure, not noise on stderr


def run(capsys: pytest.CaptureFixture[str], args: list[str]) -> tuple[int, str, str]:
    rc = main(args)
    captured = capsys.readouterr()
    return rc, captured.out, captured.err


def refused(capsys: pytest.CaptureFixture[str], args: list[str], *words: str) -> str:
    rc, out, err = run(capsys, args)
    assert rc == 2 and out == "", (rc, out)
    assert err.startswith("optcomp: error: ") and err.count("\n") == 1, err
    for word in words:
        assert word in err, (word, err)
    return err


def answer_json(capsys: pytest.CaptureFixture[str], args: list[str]) -> Any:
    rc, out, err = run(capsys, args)
    assert rc == 0 and err == "", err

    def refuse(token: str) -> float:
        raise AssertionError(f"non-JSON constant {token}")

    return json.loads(out, parse_constant=refuse)


# --- Tracebacks -------------------------------------------------------------------------------


def test_eps_710_is_mathematics_not_overflow(capsys: pytest.CaptureFixture[str]) -> None:
    data = answer_json(capsys, ["compose", "--eps", "710", "--delta", "0", "-k", "3", "--target-delta", "1e-6", "--json"])
    eps = data["epsilon"]
    assert eps["advanced_drv"] == "inf"  # 3·710·(e^710 − 1) exceeds the float range: its true value rounds to inf
    assert eps["basic"] == 2130.0
    assert eps["optimal"]["lower"] <= 2130.0 <= eps["optimal"]["upper"] * (1 + EXACT_RTOL)
    assert bounds.advanced_drv(710.0, 0.0, 3, 1e-6) == (math.inf, 1e-6)
    assert bounds.advanced_drv(1e308, 0.0, 3, 1e-6)[0] == math.inf


def test_k_10_to_30_is_refused_with_a_feasible_k(capsys: pytest.CaptureFixture[str]) -> None:
    err = refused(capsys, ["compose", "--eps", "0.1", "--delta", "0", "-k", str(10**30), "--target-delta", "1e-6"], "-k")
    assert re.search(r"use -k <= \d+", err)


@pytest.mark.parametrize(
    "args",
    [
        ["account", "--mech", "gaussian:sigma=1e-300", "--delta", "1e-6"],
        ["dpsgd", "--sigma", "1e-300", "--q", "0.01", "--steps", "10", "--delta", "1e-5"],
    ],
)
def test_tiny_sigma_is_one_line(capsys: pytest.CaptureFixture[str], args: list[str]) -> None:
    refused(capsys, args)


def test_plot_region_eps_1e300(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    target = tmp_path / "r.png"
    rc, _, err = run(capsys, ["plot", "region", "--eps", "1e300", "--output", str(target)])
    assert rc == 0 and err == "" and target.stat().st_size > 0
    # ε = 1e300 reveals the secret: β(0) = 1 − δ, β(α) = 0 for α > 0 (no NaN from inf·0).
    reg = region.composed(1e300, 0.0, 3)
    assert reg.beta([0.0, 0.5, 1.0]).tolist() == [1.0, 0.0, 0.0]
    assert reg.contains(0.5, 0.5) and not reg.contains(0.0, 0.5)


def test_target_eps_1e308(capsys: pytest.CaptureFixture[str]) -> None:
    data = answer_json(capsys, ["compose", "--eps", "0.1", "--delta", "0", "-k", "3", "--target-eps", "1e308", "--json"])
    delta = data["delta"]
    # ε_g ≥ Σε_i: every theorem, and the optimum, certify δ = Σδ_i = 0.
    assert delta["basic"] == delta["kov"] == 0.0
    assert delta["optimal"] == {"lower": 0.0, "upper": 0.0}
    assert bounds.compare_delta(optimal.homogeneous(0.1, 0.0, 3), 1e308)["advanced_drv"] == 0.0


def test_huge_total_epsilon_is_refused_not_answered_0(capsys: pytest.CaptureFixture[str]) -> None:
    # The optimal engine returned [0, 0] here (truth above the float maximum); refused until it handles it.
    refused(capsys, ["compose", "--eps", "1e307", "--delta", "0", "-k", "10", "--target-delta", "1e-6"], "total epsilon")


def test_bounds_overflow_edges() -> None:
    assert bounds.basic_heterogeneous([(1e308, 0.0), (1e308, 0.0)]) == (math.inf, 0.0)
    eps0, delta0 = bounds.kov_per_query_budget(1e308, 1e-300, 3)
    assert 0.0 < eps0 < 1e308 and delta0 == pytest.approx(1e-300 / 6)
    huge = bounds.compare_epsilon(optimal.homogeneous(0.1, 0.0, 10**12), 1e-6)  # O(1), not 10^12 pairs
    assert huge["basic"] == pytest.approx(1e11)
    assert huge["kov"] <= huge["advanced_lecture_notes"] < huge["advanced_drv"] < huge["basic"]
    with pytest.raises(ValueError, match="k must be"):
        bounds.basic(0.1, 0.0, 10**400)


# --- NaN as an answer, invalid JSON -----------------------------------------------------------


def test_region_k_8000_has_no_nan_no_negative_zero(capsys: pytest.CaptureFixture[str]) -> None:
    data = answer_json(capsys, ["region", "--eps", "0.1", "--delta", "0.001", "-k", "8000", "--json"])
    assert all(b >= 0.0 and math.copysign(1.0, b) == 1.0 for b in data["beta"])
    # The same overflow (e^{kε} with kε = 720 > 709) at a size that runs in milliseconds, as CSV:
    rc, out, err = run(capsys, ["region", "--eps", "1", "--delta", "0.001", "-k", "720"])
    assert rc == 0 and err == ""
    assert "nan" not in out.lower() and not re.search(r"(?<![\w.])-0\.0\b", out)


def test_region_has_json_flag(capsys: pytest.CaptureFixture[str]) -> None:
    data = answer_json(capsys, ["region", "--eps", "0.1", "--delta", "0", "-k", "30", "--json"])
    assert set(data) == {"constraints", "tv_bound", "alpha", "beta"}


def test_region_points_are_explained(capsys: pytest.CaptureFixture[str]) -> None:
    refused(capsys, ["region", "--eps", "0.1", "--delta", "0", "-k", "3", "--points", "0"], "--points")
    rc, out, _ = run(capsys, ["region", "--help"])
    assert rc == 0 and "kink" in out
    data = answer_json(capsys, ["region", "--eps", "0.1", "--delta", "0.001", "-k", "30", "--json"])
    assert 201 <= len(data["alpha"]) <= 201 + 3 * len(data["constraints"])


# --- Tables that lie by omission -------------------------------------------------------------


def test_infinite_optimum_is_printed_not_read_as_markup(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = run(capsys, ["compose", "--eps", "0.1", "--delta", "0.01", "-k", "10", "--target-delta", "0.001"])
    assert rc == 0 and "[inf, inf]" in out
    optimal_row = next(line for line in out.splitlines() if "MV Thm" in line)
    assert "—" in optimal_row  # ratio inf/inf is undefined, not 1


def test_ratio_column_never_nan(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = run(capsys, ["compose", "--eps", "0", "--delta", "0", "-k", "10", "--target-delta", "1e-6"])
    assert rc == 0 and "nan" not in out.lower() and "—" in out and "undefined" in out


def test_negative_zero_input_is_not_echoed(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = run(capsys, ["compose", "--eps", "0.1", "--delta", "0", "-k", "5", "--target-delta", "-0.0"])
    assert rc == 0 and "= 0" in out and "-0" not in out


# --- Minutes of silence ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "hint"),
    [
        (["compose", "--eps", "0.1", "--delta", "0", "-k", str(10**7), "--target-delta", "1e-6"], "use -k <="),
        (["region", "--eps", "0.1", "--delta", "0.001", "-k", str(10**5)], "use -k <="),
        (["tradeoff", "--eps", "0.1", "--delta", "1e-6", "--group", str(10**9)], "--group"),
        (["tradeoff", "--gdp", "1", "--points", str(10**6)], "--format csv"),
        (["plot", "compare", "--max-k", str(10**12), "--output", "x.png"], "--max-k <="),
    ],
)
def test_long_work_is_refused_up_front(capsys: pytest.CaptureFixture[str], args: list[str], hint: str) -> None:
    refused(capsys, args, hint)


def test_a_huge_gdp_count_is_answered_in_closed_form(capsys: pytest.CaptureFixture[str]) -> None:
    """-k is a count (G_μ composed k times is G_{μ√k}, Dong–Roth–Su Cor 3.3): 10¹² runs answer at once."""
    rc, out, err = run(capsys, ["tradeoff", "--gdp", "1", "-k", str(10**12), "--points", "3", "--json"])
    assert rc == 0 and err == ""
    assert json.loads(out)["curve"].startswith("G_1e+06 ")


def test_progress_bar_only_on_request(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["region", "--eps", "0.1", "--delta", "0", "-k", "200", "--json"]
    rc, out, err = run(capsys, args)
    assert rc == 0 and err == ""  # stderr is not a terminal here: no bar
    rc, out_bar, err_bar = run(capsys, ["--progress", *args])
    assert rc == 0 and "privacy region" in err_bar and out_bar == out  # the bar is on stderr only


# --- Rough help ------------------------------------------------------------------------------


@pytest.mark.parametrize("args", [[], ["plot"]])
def test_bare_invocation_prints_readable_help(capsys: pytest.CaptureFixture[str], args: list[str]) -> None:
    rc, out, err = run(capsys, args)
    assert rc == 0 and err == ""
    assert out.startswith("Usage: optcomp") and out.count("\n") > 5 and "Commands:" in out


def test_command_descriptions_are_not_cut(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = run(capsys, ["--help"])
    assert rc == 0 and "…" not in out and "..." not in out.split("Commands:")[1]
    assert "KOV and" in out and "optimal composition." in out


def test_account_help_lists_kinds_and_config_format(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    rc, out, _ = run(capsys, ["account", "--help"])
    assert rc == 0
    for word in ("gaussian", "laplace", "epsdelta", "rr", "discrete_laplace", "count=", "q=", "[[mechanisms]]", "job.toml"):
        assert word in out, word
    # The example in the help is a working config file.
    lines = out.split("Config file")[1].split("Example:")[0].splitlines()[2:]
    example = "\n".join(line.strip() for line in lines if line.strip())
    job = tmp_path / "job.toml"
    job.write_text(example, encoding="utf-8")
    data = answer_json(capsys, ["account", "--config", str(job), "--json"])
    assert math.isfinite(data["results"][0]["upper"])
