"""Long CLI work says what it is doing, or is refused up front (issue 27, item 12, the leftovers).

* ``account --dp-event``: our certified answer never waits on dp_accounting's reference — the table is
  printed before the reference runs, and an interrupt of the reference keeps our answer (table or
  ``--json`` document).
* The up-front cost estimate of distinct Laplace laws (``cli/_costs.py``) refuses 10⁵ of them before
  any composition, naming the limit and the count that fits.
* ``account --opacus-history`` with a history of 10⁵ entries: mixed σ/q (a few distinct laws) is
  answered with stage progress on stderr; 10⁵ distinct entries are refused up front with the limit named.
* ``account --config`` shows its stages (``stage i/3: ...``) on stderr with ``optcomp --progress``.

In-process (``optcomp.cli.main``) with capsys; no timings are asserted.
"""

from __future__ import annotations

import json
import math
import random
from pathlib import Path
from typing import Any

import pytest

import optcomp
from optcomp.cli import _common, _costs, _interop, main
from optcomp.mechanisms import Laplace

GAUSSIAN_EVENT = {"class_name": "SelfComposedDpEvent", "count": 100,
                  "event": {"class_name": "GaussianDpEvent", "noise_multiplier": 20.0}}


def _run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    rc = main(args)
    captured = capsys.readouterr()
    return rc, captured.out, captured.err


def _write(tmp_path: Path, data: Any, name: str) -> str:
    path = tmp_path / name
    path.write_text(json.dumps(data), encoding="utf-8")
    return str(path)


def _no_composition(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any composition started fails the test: a refusal must come before the work."""
    def refuse(*_: Any, **__: Any) -> Any:
        raise AssertionError("the composition started before the refusal")

    monkeypatch.setattr(optcomp, "compose", refuse)
    monkeypatch.setattr("optcomp.interop._dp_event.EventComposition.epsilon", refuse)


def _unlimited_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    """The time limit decides, whatever this machine's memory (the memory cap has its own tests)."""
    monkeypatch.setattr(_costs, "memory_limit_bytes", lambda: math.inf)
    monkeypatch.setattr(_common, "memory_limit_bytes", lambda: math.inf)


# --- (a) the certified answer does not wait on the reference ----------------------------------------


def test_table_is_printed_before_the_reference_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    printed_before: list[str] = []

    def reference(*_: Any, **__: Any) -> tuple[str, None]:
        printed_before.append(capsys.readouterr().out)
        return "a stand-in reference", None

    monkeypatch.setattr(_interop, "_reference", reference)
    rc, out, err = _run(["account", "--dp-event", _write(tmp_path, GAUSSIAN_EVENT, "e.json"), "--delta", "1e-5"],
                        capsys)
    assert rc == 0, err
    assert "upper (certified)" in printed_before[0] and "reference:" not in printed_before[0]
    assert "reference: a stand-in reference" in out


@pytest.mark.parametrize("as_json", [True, False])
def test_interrupted_reference_keeps_the_certified_answer(
    as_json: bool, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def reference(*_: Any, **__: Any) -> tuple[str, None]:
        raise KeyboardInterrupt

    monkeypatch.setattr(_interop, "_reference", reference)
    path = _write(tmp_path, GAUSSIAN_EVENT, "e.json")
    rc, out, err = _run(["account", "--dp-event", path, "--delta", "1e-5", *(["--json", "--reference"] if as_json else [])],
                      capsys)
    assert rc == 0, err
    if as_json:
        data = json.loads(out)
        assert "interrupted" in data["reference"]
        (row,) = data["results"]
        assert 0 < row["lower"] <= row["upper"] < math.inf and row["reference"] is None
    else:
        assert "upper (certified)" in out and "reference: dp_accounting reference interrupted" in out


# --- (b) the Laplace estimate refuses up front ------------------------------------------------------


def test_laplace_estimate_refuses_at_the_time_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    _unlimited_memory(monkeypatch)
    fits = int(_common.TIME_LIMIT_S / _costs._LAW_S)
    laws = [(Laplace(100.0 + i * 1e-3), 1) for i in range(fits + 1)]
    assert "distinct privacy loss distributions" in _costs.check_composition_cost(laws[:fits])
    with pytest.raises(ValueError, match=rf"composing {fits + 1} distinct mechanisms would take .*limit 10 min.*"
                                         rf"use at most {fits} distinct ones"):
        _costs.check_composition_cost(laws)


def test_big_laplace_config_is_refused_before_composing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _unlimited_memory(monkeypatch)
    _no_composition(monkeypatch)
    n = 10**5
    config = {"delta": 1e-5, "mechanisms": [{"kind": "laplace", "scale": 100 + i * 1e-3} for i in range(n)]}
    rc, out, err = _run(["account", "--config", _write(tmp_path, config, "laplace.json"), "--json"], capsys)
    assert rc == 2 and out == "" and err.count("\n") == 1 and "Traceback" not in err
    assert f"composing {n} distinct mechanisms would take about" in err and "(limit 10 min)" in err
    assert f"use at most {int(_common.TIME_LIMIT_S / _costs._LAW_S)} distinct ones" in err


# --- (c) a long Opacus history ----------------------------------------------------------------------


def _history(n: int, *, distinct: bool) -> list[list[float]]:
    rng = random.Random(27)
    if distinct:
        return [[1.0 + i * 1e-6, 0.01, 1] for i in range(n)]
    return [[rng.choice([0.8, 1.0, 1.1, 1.3]), rng.choice([0.001, 0.004, 0.01]), 1] for _ in range(n)]


@pytest.mark.slow  # 15-40 s: make test-slow (keeps make test under 10 minutes on 2 cores)
def test_long_mixed_opacus_history_answers_with_progress(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(tmp_path, _history(10**5, distinct=False), "opacus.json")
    rc, out, err = _run(["--progress", "account", "--opacus-history", path, "--delta", "1e-5", "--json"], capsys)
    assert rc == 0
    for stage in ("stage 1/3: reading the --opacus-history file", "stage 2/3: composing 12 distinct",
                  "stage 3/3: our certified answer is ready"):
        assert stage in err, stage
    data = json.loads(out)
    (row,) = data["results"]
    assert 0 < row["lower"] <= row["upper"] < math.inf
    assert data["reference"] == _interop.JSON_REFERENCE_NOT_RUN  # --json: no comparison unless asked


@pytest.mark.slow  # 10-12 s: make test-slow (keeps make test under 10 minutes on 2 cores)
def test_long_distinct_opacus_history_is_refused_up_front(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _no_composition(monkeypatch)
    path = _write(tmp_path, _history(10**5, distinct=True), "opacus.json")
    rc, out, err = _run(["account", "--opacus-history", path, "--delta", "1e-5"], capsys)
    assert rc == 2 and out == "" and err.count("\n") == 1
    assert "composing 100000 distinct mechanisms would" in err and "use at most" in err
    assert "(limit 10 min)" in err or "(cap " in err


# --- (d) stage progress of account --config ---------------------------------------------------------


@pytest.mark.slow  # 15-40 s: make test-slow (keeps make test under 10 minutes on 2 cores)
def test_account_config_shows_its_stages(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = {"delta": 1e-5, "epsilon": 1.0,
              "mechanisms": [{"kind": "laplace", "scale": 100 + i} for i in range(5)]}
    path = _write(tmp_path, config, "c.json")
    rc, out, err = _run(["--progress", "account", "--config", path, "--json"], capsys)
    assert rc == 0 and len(json.loads(out)["results"]) == 2
    for stage in ("stage 1/3: building 5 mechanisms", "stage 2/3: composing 5 distinct privacy loss distributions",
                  "stage 3/3: the RDP comparison table"):
        assert stage in err, stage
    rc, out, err = _run(["--no-progress", "account", "--config", path, "--json"], capsys)
    assert rc == 0 and err == ""
