"""The CLI on big and hostile inputs (issues 15 and 19): one regression test per defect found by the fuzz.

Nested JSON of any depth is one line and exit 2; long lists skip the add-on tables and say so; limits are
checked before work starts; the dp_accounting reference runs only when cheap; curves stream; the plan's
log is opt-in; the package exposes every subpackage. In-process (``optcomp.cli.main``) with capsys.
"""

from __future__ import annotations

import json
import math
import socket
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest

import optcomp
from optcomp.cli import _rdp_compare, main
from optcomp.cli._common import MAX_JSON_DEPTH, accuracy_advice, memory_limit_bytes
from optcomp.cli._interop import REFERENCE_MAX_EVENTS, reference_cost

DEEP = 100_000  # nesting far beyond Python's recursion limit
#: δ(1e308) of one Gaussian is below every double; the engines' floor for a deep-tail δ is about 1e-306.
DELTA_NEGLIGIBLE = 1e-300


def _run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    rc = main(args)
    captured = capsys.readouterr()
    return rc, captured.out, captured.err


def _refused(rc: int, out: str, err: str, *needles: str) -> None:
    assert rc == 2 and out == "", (rc, out[:200])
    assert err.startswith("optcomp: error: ") and err.count("\n") == 1, err
    assert "Traceback" not in err
    for needle in needles:
        assert needle in err, (needle, err)


# --- 1. nested JSON: one line, exit 2 ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "text", "argv"),
    [
        ("deep.json", "[" * DEEP + "]" * DEEP, ["compose", "--file", "@", "--target-delta", "1e-5"]),
        ("deep.json", "[" * DEEP + "]" * DEEP, ["region", "--file", "@"]),
        ("deep.json", '{"a":' * DEEP + "1" + "}" * DEEP, ["account", "--config", "@", "--delta", "1e-5"]),
        ("deep.toml", "a = " + "[" * DEEP + "]" * DEEP, ["account", "--config", "@", "--delta", "1e-5"]),
        ("deep.json", '{"class_name":"ComposedDpEvent","events":[' * (DEEP // 10)
         + '{"class_name":"GaussianDpEvent","noise_multiplier":1.0}' + "]}" * (DEEP // 10),
         ["account", "--dp-event", "@", "--delta", "1e-5"]),
        ("deep.json", "[" * DEEP + "]" * DEEP, ["account", "--opacus-history", "@", "--delta", "1e-5"]),
        ("deep.json", '{"statistics":' * DEEP + "1" + "}" * DEEP, ["plan", "@"]),
        ("deep.toml", "epsilon = " + "[" * DEEP + "]" * DEEP, ["plan", "@"]),
    ],
)
def test_deeply_nested_input_is_one_line(
    name: str, text: str, argv: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    _refused(*_run([str(path) if a == "@" else a for a in argv], capsys), f"at most {MAX_JSON_DEPTH} levels")


def test_moderate_nesting_is_still_read(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # A real DpEvent tree a few levels deep is well inside the limit.
    event = {"class_name": "ComposedDpEvent", "events": [{"class_name": "GaussianDpEvent", "noise_multiplier": 4.0}]}
    for _ in range(10):
        event = {"class_name": "ComposedDpEvent", "events": [event]}
    path = tmp_path / "event.json"
    path.write_text(json.dumps(event), encoding="utf-8")
    rc, out, err = _run(["account", "--dp-event", str(path), "--delta", "1e-5", "--json"], capsys)
    assert rc == 0 and err == "", err
    assert json.loads(out)["results"][0]["upper"] > 0


# --- 2. long lists: the add-on tables are skipped, and say so ----------------------------------------


def test_compose_long_file_skips_the_rdp_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    n = 2_000
    path = tmp_path / "pairs.txt"
    path.write_text("".join(f"{0.001 + i * 1e-7!r},0\n" for i in range(n)), encoding="utf-8")
    rc, out, err = _run(["compose", "--file", str(path), "--target-delta", "1e-5", "--json"], capsys)
    assert rc == 0 and err == ""
    data = json.loads(out)
    assert data["k"] == n and "skipped" in data["rdp_comparison"]
    assert f"{n} distinct mechanisms" in data["rdp_comparison"]["skipped"]
    rc, out, _ = _run(["compose", "--file", str(path), "--target-delta", "1e-5"], capsys)
    assert rc == 0 and "skipped:" in out


def test_account_many_distinct_mechanisms_skips_the_rdp_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    n = _rdp_compare.MAX_DISTINCT_ITEMS + 1
    config = {"delta": 1e-5, "mechanisms": [{"kind": "gaussian", "sigma": 50.0 + i * 1e-3} for i in range(n)]}
    path = tmp_path / "many.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    rc, out, err = _run(["account", "--config", str(path), "--json"], capsys)
    assert rc == 0 and err == ""
    data = json.loads(out)
    assert "skipped" in data["rdp_comparison"]
    assert 0 < data["results"][0]["lower"] <= data["results"][0]["upper"]


def test_region_long_list_uses_fewer_eps_points_and_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from optcomp.cli import compose as compose_cli

    monkeypatch.setattr(compose_cli, "_REGION_DEFAULT_S", 1e-6)  # as if the list were 10⁵ pairs long
    path = tmp_path / "pairs.txt"
    path.write_text("".join(f"{0.05 + i * 1e-4!r},0\n" for i in range(20)), encoding="utf-8")
    rc, out, err = _run(["region", "--file", str(path), "--json", "--points", "5"], capsys)
    assert rc == 0
    assert err.startswith("optcomp: note: 20 distinct pairs") and err.count("\n") == 1 and "--eps-points 3" in err
    assert len(json.loads(out)["constraints"]) <= 3 + 1
    rc, out, err = _run(["region", "--file", str(path), "--json", "--points", "5", "--eps-points", "4"], capsys)
    assert rc == 0 and err == ""  # an explicit choice is kept


# --- 3. limits checked before work starts -----------------------------------------------------------


def test_memory_cap_beyond_the_machine_is_refused_up_front(capsys: pytest.CaptureFixture[str]) -> None:
    cap = int(memory_limit_bytes() * 4) if math.isfinite(memory_limit_bytes()) else 10**18
    rc, out, err = _run(["account", "--mech", "gaussian:sigma=1,count=10", "--delta", "1e-5",
                         "--accuracy", f"relative_width=1e-9,memory_cap={cap}"], capsys)
    _refused(rc, out, err, "--accuracy memory_cap must be <=")


def test_grid_too_large_names_the_accuracy_option_once(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, err = _run(["account", "--mech", "laplace:scale=1,count=3", "--mech", "gaussian:sigma=1,count=3",
                         "--delta", "1e-5", "--accuracy", "relative_width=1e-12,memory_cap=1048576"], capsys)
    _refused(rc, out, err, "--accuracy relative_width=")
    assert "Accuracy." not in err and err.count("ask for") == 0 and err.count("--accuracy relative_width") == 1


@pytest.mark.parametrize(
    "message",
    [
        ("the requested relative width 0.0001 is not reached before the memory cap (1073741824 bytes): at grid "
        "step 0.08 the width is 0.00655; ask for a larger Accuracy.relative_width or raise Accuracy.memory_cap "
        "(the composed privacy loss spans 36152369 grid points (the memory cap allows 5592405); ask for a larger "
        "Accuracy.relative_width or grid_step, raise Accuracy.memory_cap, or compose fewer mechanisms)"),
        "no grid step fits the memory cap; raise Accuracy.memory_cap or compose fewer mechanisms",
    ],
)
def test_accuracy_advice_rewrites_library_fields(message: str) -> None:
    text = accuracy_advice(message)
    assert "Accuracy." not in text and "ask for" not in text and text.count("memory_cap=") == 1
    if "the width is 0.00655" in message:
        assert "--accuracy relative_width=0.0066" in text


def test_dp_event_reference_is_gated_by_its_cost(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    gaussian = {"class_name": "GaussianDpEvent", "noise_multiplier": 100.0}
    many = {"class_name": "ComposedDpEvent", "events": [gaussian] * (REFERENCE_MAX_EVENTS + 1)}
    huge = {"class_name": "SelfComposedDpEvent", "event": {**gaussian, "noise_multiplier": 1e4}, "count": 10**7}
    assert reference_cost(many) == (REFERENCE_MAX_EVENTS + 1, 1)
    assert reference_cost(huge) == (1, 10**7)
    for event, why in ((many, "composed events"), (huge, "composition count")):
        path = tmp_path / "event.json"
        path.write_text(json.dumps(event), encoding="utf-8")
        rc, out, err = _run(["account", "--dp-event", str(path), "--epsilon", "1"], capsys)  # the table's gate
        assert rc == 0 and err == "", err
        (label,) = [line for line in out.splitlines() if line.startswith("reference: ")]
        assert "delta at epsilon=1:" not in out  # no reference number
        if "not installed" not in label:
            assert "skipped" in label and why in label and "--reference" in label
    rc, out, _ = _run(["account", "--dp-event", str(path), "--epsilon", "1", "--no-reference", "--json"], capsys)
    assert rc == 0 and "--no-reference" in json.loads(out)["reference"]


def test_tradeoff_csv_streams(capsys: pytest.CaptureFixture[str]) -> None:
    points = 120_001
    main(["tradeoff", "--gdp", "1", "--points", "11", "--format", "csv"])  # imports happen outside the trace
    capsys.readouterr()
    tracemalloc.start()
    try:
        rc = main(["tradeoff", "--gdp", "1", "--points", str(points), "--format", "csv"])
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    out = capsys.readouterr().out
    assert rc == 0
    lines = out.splitlines()
    assert lines[0] == "alpha,beta" and len(lines) == points + 1
    assert lines[1] == "0.0,1.0" and lines[-1] == "1.0,0.0"
    # Only one chunk of rows is held: the whole curve as Python rows and text would need > 20 MB.
    assert peak < 8 * 2**20, peak


def test_tradeoff_json_streams_valid_json(capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["tradeoff", "--gdp", "1", "--subsample", "0.5", "--points", "25001", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert rc == 0 and len(data["points"]) == 25001 and data["certified"] == "bracket"
    assert all(p["beta_lower"] <= p["beta_upper"] for p in data["points"])


# --- 4. answers, never [0, inf]; huge ε answered ----------------------------------------------------


def test_huge_epsilon_on_a_gaussian_is_answered(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, err = _run(["account", "--mech", "gaussian:sigma=1", "--epsilon", "1e308", "--epsilon",
                         "1.7976931348623157e308", "--json"], capsys)
    assert rc == 0 and err == ""
    for row in json.loads(out)["results"]:
        assert row["lower"] == 0.0 and 0.0 <= row["upper"] <= DELTA_NEGLIGIBLE


def test_zero_to_inf_bracket_is_never_printed(capsys: pytest.CaptureFixture[str]) -> None:
    """10¹³ subsampled Gaussians: the composed error bound overflows at every grid the memory cap allows, so
    the engine's bracket would be [0, inf]; it refuses it itself (one line, exit 2) rather than printing it."""
    rc, out, err = _run(["account", "--mech", "gaussian:sigma=1,q=1e-6,count=10000000000000",
                         "--delta", "1e-5"], capsys)
    _refused(rc, out, err, "no finite certified bracket", "fewer mechanisms")


# --- 5. plan, reproduce, serve: the output contract -------------------------------------------------


def _plan(tmp_path: Path, statistics: int, delta: float) -> Path:
    stats = [{"name": f"s{i}", "kind": "count", "mechanism": "geometric", "weight": 1.0} for i in range(statistics)]
    path = tmp_path / "plan.json"
    path.write_text(json.dumps({"epsilon": 1.0, "delta": delta, "statistics": stats}), encoding="utf-8")
    return path


def test_plan_prints_no_negative_zero_and_no_log(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, err = _run(["plan", str(_plan(tmp_path, 3, -0.0)), "--mode", "basic"], capsys)
    assert rc == 0 and err == ""
    assert "δ = 0" in out and "-0" not in out


def test_plan_log_only_with_verbose(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _plan(tmp_path, 101, 1e-6)
    rc, _, err = _run(["--no-progress", "plan", str(path), "--mode", "mechanism_aware"], capsys)
    assert rc == 0 and err == ""
    rc, _, err = _run(["plan", str(path), "--mode", "mechanism_aware", "--verbose"], capsys)
    assert rc == 0 and err.startswith("mechanism-aware: ")


def test_reproduce_follows_the_progress_option(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc, _, err = _run(["--no-progress", "reproduce", "kov-fig1", "--fast", "--output", str(tmp_path)], capsys)
    assert rc == 0 and err == ""
    rc, _, err = _run(["--progress", "reproduce", "kov-fig1", "--fast", "--output", str(tmp_path)], capsys)
    assert rc == 0 and "kov-fig1" in err


def test_serve_on_a_busy_port_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("uvicorn")
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        rc, out, err = _run(["serve", "--port", str(port)], capsys)
    _refused(rc, out, err, f"--port {port}", "choose another --port")
    assert "http://" not in err


# --- 6. hygiene --------------------------------------------------------------------------------------


def test_every_subpackage_is_an_attribute() -> None:
    import pkgutil

    names = {m.name for m in pkgutil.iter_modules(optcomp.__path__) if not m.name.startswith("_")}
    assert {"planner", "rdp", "interop", "reproduce", "web", "fdp", "pld", "dpsgd"} <= names
    for name in sorted(names - {"web"}):  # web needs the web extra (checked below when installed)
        assert getattr(optcomp, name).__name__ == f"optcomp.{name}"
        assert name in dir(optcomp)
    with pytest.raises(AttributeError, match="no_such_module"):
        optcomp.no_such_module  # noqa: B018


def test_grid_too_large_error_at_the_root() -> None:
    from optcomp import GridTooLargeError
    from optcomp.pld import GridTooLargeError as Engine

    assert GridTooLargeError is Engine and issubclass(GridTooLargeError, ValueError)
    assert "GridTooLargeError" in optcomp.__all__


def test_import_stays_cheap() -> None:
    code = "import sys, optcomp; print(sorted(m for m in ('starlette', 'uvicorn', 'matplotlib') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120).stdout
    assert out.strip() == "[]"


def test_a_delta_refusal_keeps_its_own_advice_on_the_command_line() -> None:
    """`delta()`'s refusal of the trivial [0, 1] bracket names its own remedy (fewer mechanisms, a larger
    memory cap); the generic "larger relative_width" advice would not help and is not added."""
    from optcomp._numerics import Bound
    from optcomp.pld._query import informative_delta

    with pytest.raises(optcomp.GridTooLargeError) as info:
        informative_delta(Bound(0.0, 1.0), 1.0)
    line = accuracy_advice(str(info.value))
    assert "Accuracy." not in line and "relative_width" not in line
    assert line.count("memory_cap") == 1 and "compose fewer mechanisms" in line
