"""optcomp.sweep: grid specs, certified rows against independent truths, the store, resumption.

Small grids at a coarse legitimate accuracy (relative width 1e-2: the brackets are certified at any
accuracy; only their width changes), in process, so that the file runs in seconds.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

from optcomp import Accuracy, dpsgd, sweep
from optcomp.sweep._evaluate import evaluate_chain
from tests._references.gdp import gdp_epsilon
from tests.tolerances import SWEEP_RELATIVE_WIDTH

ACC = {"relative_width": SWEEP_RELATIVE_WIDTH}


def _grid(query: str = "epsilon", **axes: Any) -> dict[str, Any]:
    return {"query": query, "accuracy": ACC, "axes": axes}


def _rows(points: list[sweep.Point], tmp_path: Path, name: str = "s.sqlite") -> list[sweep.Row]:
    sweep.run(points, tmp_path / name, workers=1)
    with sweep.Store(tmp_path / name) as store:
        return store.rows(points)


# -- the grid spec ------------------------------------------------------------------------------------
def test_ranges_lists_scalars_and_product() -> None:
    pts = sweep.grid_points(_grid(
        noise_multiplier={"start": 0.5, "stop": 1.5, "num": 3},
        sampling_rate={"start": 1e-3, "stop": 1e-1, "num": 3, "log": True},
        steps={"start": 10, "stop": 30, "step": 10},
        delta=1e-5,
    ))
    assert len(pts) == 27
    assert sorted({p.get("noise_multiplier") for p in pts}) == [0.5, 1.0, 1.5]  # type: ignore[type-var]
    assert sorted({p.get("steps") for p in pts}) == [10, 20, 30]  # type: ignore[type-var]
    qs = sorted({p.get("sampling_rate") for p in pts})  # type: ignore[type-var]
    assert qs[0] == pytest.approx(1e-3) and qs[1] == pytest.approx(1e-2) and qs[2] == pytest.approx(1e-1)
    assert [p.index for p in pts] == list(range(27))
    assert len({p.key for p in pts}) == 27


def test_log_range_of_steps_is_rounded_to_integers() -> None:
    pts = sweep.grid_points(_grid(noise_multiplier=1.0, sampling_rate=0.01, delta=1e-5,
                                  steps={"start": 100, "stop": 100000, "num": 4, "log": True}))
    assert [p.get("steps") for p in pts] == [100, 1000, 10000, 100000]
    assert all(isinstance(p.get("steps"), int) for p in pts)


def test_zip_groups_and_zip_mode() -> None:
    pts = sweep.grid_points({**_grid(noise_multiplier=[1.0, 2.0], sampling_rate=[0.01, 0.02, 0.03],
                                     steps=[10, 20, 30], delta=1e-5), "zip": [["sampling_rate", "steps"]]})
    assert [(p.get("sampling_rate"), p.get("steps")) for p in pts[:3]] == [(0.01, 10), (0.02, 20), (0.03, 30)]
    assert len(pts) == 6
    zipped = sweep.grid_points({**_grid(noise_multiplier=[1.0, 2.0], sampling_rate=0.01, steps=[10, 20],
                                        delta=1e-5), "combine": "zip"})
    assert [(p.get("noise_multiplier"), p.get("steps")) for p in zipped] == [(1.0, 10), (2.0, 20)]
    with pytest.raises(ValueError, match="equal lengths"):
        sweep.grid_points({**_grid(noise_multiplier=[1.0, 2.0], sampling_rate=0.01, steps=[1, 2, 3], delta=1e-5),
                           "combine": "zip"})


def test_several_grids_in_one_document_number_their_rows_in_order() -> None:
    doc = {"grids": [_grid(noise_multiplier=1.0, sampling_rate=0.01, steps=10, delta=[1e-5, 1e-6]),
                     _grid("noise_multiplier", target_epsilon=1.0, sampling_rate=0.01, steps=10, delta=1e-5)]}
    pts = sweep.grid_points(doc)
    assert [(p.index, p.query) for p in pts] == [(0, "epsilon"), (1, "epsilon"), (2, "noise_multiplier")]


def test_toml_and_json_files_load(tmp_path: Path) -> None:
    (tmp_path / "g.toml").write_text(
        'query = "delta"\n[axes]\nnoise_multiplier = 1.0\nsampling_rate = 0.01\nsteps = [10, 20]\nepsilon = 1.0\n'
    )
    (tmp_path / "g.json").write_text(
        '{"query": "delta", "axes": {"noise_multiplier": 1.0, "sampling_rate": 0.01, "steps": [10, 20], "epsilon": 1.0}}'
    )
    assert sweep.load_grid(tmp_path / "g.toml") == sweep.load_grid(tmp_path / "g.json")


@pytest.mark.parametrize(
    ("axes", "match"),
    [
        ({"noise_multiplier": [1.0, 2.0, -1.0, 3.0]}, r"grid row 2 .*noise_multiplier"),
        ({"dataset_size": 1000}, r"grid row 0 .*dataset_size"),
        ({"sampling": ["poisson", "fixed_size"], "examples_per_user": 2}, r"grid row 1 .*examples_per_user"),
        ({"delta": [1e-5, 1.5]}, r"grid row 1 .*delta"),
        ({"sampling": "balls_in_bins", "sampling_rate": 0.3}, r"grid row 0 .*sampling_rate"),
        ({"sigma": 1.0}, r"unknown parameter 'sigma'"),
        ({"steps": 2.5}, r"grid row 0 .*steps"),
        ({"noise_multiplier": float("nan")}, r"grid row 0 .*noise_multiplier"),
    ],
)
def test_bad_input_is_refused_before_any_work_naming_row_and_parameter(axes: dict[str, Any], match: str) -> None:
    base = {"noise_multiplier": 1.0, "sampling_rate": 0.01, "steps": 10, "delta": 1e-5}
    with pytest.raises(ValueError, match=match):
        sweep.grid_points(_grid(**(base | axes)))


@pytest.mark.parametrize(
    ("doc", "match"),
    [
        ({"query": "epsilons", "axes": {}}, "query must be one of"),
        ({"query": "epsilon", "axes": {"noise_multiplier": 1.0, "sampling_rate": 0.1, "steps": 1}}, "'delta'"),
        ({"query": "epsilon", "axis": {}}, "unknown key 'axis'"),
        ({**_grid(noise_multiplier=1.0, sampling_rate=0.1, steps=1, delta=1e-5), "combine": "cross"}, "combine"),
        ({**_grid(noise_multiplier=1.0, sampling_rate=0.1, steps=1, delta=1e-5), "accuracy": {"width": 1}}, "width"),
        (_grid(noise_multiplier={"start": 1, "stop": 2}, sampling_rate=0.1, steps=1, delta=1e-5), "num"),
        (_grid(noise_multiplier={"start": 0, "stop": 2, "num": 3, "log": True}, sampling_rate=0.1, steps=1,
               delta=1e-5), "start"),
        (_grid(noise_multiplier=[], sampling_rate=0.1, steps=1, delta=1e-5), "empty"),
    ],
)
def test_malformed_grids_are_refused(doc: dict[str, Any], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        sweep.grid_points(doc)


# -- rows against independent truths ----------------------------------------------------------------
def test_full_batch_rows_bracket_the_gdp_closed_form(tmp_path: Path) -> None:
    """q = 1: T Gaussian steps are μ-GDP with μ = √T/σ (Dong–Roth–Su Cor 3.3); ε(δ) from mpmath."""
    pts = sweep.grid_points(_grid(noise_multiplier=[0.8, 2.0], sampling_rate=1.0, steps=[1, 50], delta=[1e-5, 1e-8]))
    for p, r in zip(pts, _rows(pts, tmp_path), strict=True):
        mu = math.sqrt(float(p.get("steps"))) / float(p.get("noise_multiplier"))  # type: ignore[arg-type]
        truth = gdp_epsilon(mu, float(p.get("delta")))  # type: ignore[arg-type]
        assert r.error is None and r.lower is not None and r.upper is not None
        assert r.lower <= truth <= r.upper
        assert r.relation == "add_remove"


@pytest.mark.parametrize("sampling", ["poisson", "fixed_size", "shuffle"])
def test_epsilon_rows_are_certified_brackets_of_what_dpsgd_brackets(sampling: str, tmp_path: Path) -> None:
    """Two certified brackets of the same ε intersect, and the sweep's meets the requested width."""
    q = 0.25 if sampling == "shuffle" else 0.02
    pts = sweep.grid_points(_grid(noise_multiplier=[0.9, 1.6], sampling_rate=q, steps=[8, 40, 200],
                                  delta=[1e-5, 1e-7], sampling=sampling))
    acc = Accuracy(relative_width=SWEEP_RELATIVE_WIDTH)
    for p, r in zip(pts, _rows(pts, tmp_path), strict=True):
        g = p.get
        ref = dpsgd.epsilon(g("noise_multiplier"), g("sampling_rate"), g("steps"), g("delta"),  # type: ignore[arg-type]
                            sampling=sampling, accuracy=acc)  # type: ignore[arg-type]
        assert r.error is None and r.lower is not None and r.upper is not None
        assert r.lower <= ref.upper and ref.lower <= r.upper
        assert r.relation == dpsgd.SAMPLING_RELATION[sampling]
        if sampling == "poisson":  # shuffle's and fixed size's lower ends are a different (dominated) pair's
            assert r.width is not None and r.width <= SWEEP_RELATIVE_WIDTH


def test_balls_in_bins_rows_are_dpsgds_amplified_brackets(tmp_path: Path) -> None:
    """Balls-in-bins refines its own epoch laws (issue 23): each row is dpsgd.epsilon's bracket, exactly."""
    pts = sweep.grid_points(_grid(noise_multiplier=3.0, sampling_rate=0.1, steps=[20, 100], delta=1e-6,
                                  sampling="balls_in_bins"))
    for p, r in zip(pts, _rows(pts, tmp_path), strict=True):
        ref = dpsgd.epsilon(3.0, 0.1, p.get("steps"), 1e-6, sampling="balls_in_bins", accuracy=p.accuracy)  # type: ignore[arg-type]
        assert r.error is None and (r.lower, r.upper) == (ref.lower, ref.upper)
        assert r.width is not None and r.width <= SWEEP_RELATIVE_WIDTH


def test_delta_rows_are_certified_brackets(tmp_path: Path) -> None:
    pts = sweep.grid_points(_grid("delta", noise_multiplier=1.1, sampling_rate=0.02, steps=[10, 300],
                                  epsilon=[0.5, 2.0]))
    acc = Accuracy(relative_width=SWEEP_RELATIVE_WIDTH)
    for p, r in zip(pts, _rows(pts, tmp_path), strict=True):
        g = p.get
        ref = dpsgd.delta(g("noise_multiplier"), g("sampling_rate"), g("steps"), g("epsilon"),  # type: ignore[arg-type]
                          accuracy=acc)
        assert r.lower is not None and r.upper is not None
        assert r.lower <= ref.upper and ref.lower <= r.upper


def test_inverse_rows_are_dpsgd_values_on_the_safe_side(tmp_path: Path) -> None:
    doc = {"grids": [_grid("noise_multiplier", target_epsilon=[1.0, 3.0], sampling_rate=0.02, steps=50, delta=1e-5),
                     _grid("steps", target_epsilon=2.0, noise_multiplier=1.2, sampling_rate=0.02, delta=1e-5)]}
    pts = sweep.grid_points(doc)
    acc = Accuracy(relative_width=SWEEP_RELATIVE_WIDTH)
    rows = _rows(pts, tmp_path)
    for p, r in zip(pts[:2], rows[:2], strict=True):
        t = float(p.get("target_epsilon"))  # type: ignore[arg-type]
        assert r.value == dpsgd.noise_multiplier(t, 0.02, 50, 1e-5, accuracy=acc)
        assert dpsgd.epsilon(r.value, 0.02, 50, 1e-5, accuracy=acc).upper <= t
    assert rows[2].value == dpsgd.steps(2.0, 1.2, 0.02, 1e-5, accuracy=acc)
    assert dpsgd.epsilon(1.2, 0.02, int(rows[2].value), 1e-5, accuracy=acc).upper <= 2.0  # type: ignore[arg-type]


def test_a_row_failing_at_run_time_stores_its_error_and_the_sweep_goes_on(tmp_path: Path) -> None:
    # σ = 0.01 with q = 1e-3 and 10⁹ steps: a composed loss far beyond the engine (dpsgd refuses it)
    pts = sweep.grid_points(_grid(noise_multiplier=[0.01, 1.0], sampling_rate=0.5, steps=[10**9, 10], delta=1e-5,
                                  ) | {"zip": [["noise_multiplier", "steps"]]})
    rows = _rows(pts, tmp_path)
    assert rows[0].error is not None and "GridTooLargeError" in rows[0].error and rows[0].upper is None
    assert rows[1].error is None and rows[1].upper is not None


def test_rows_do_not_depend_on_how_chains_are_batched() -> None:
    pts = sweep.grid_points(_grid(noise_multiplier=[1.0, 1.5], sampling_rate=0.02, steps=[10, 100], delta=[1e-5, 1e-6]))
    alone = [row for chain in sweep.plan_tasks(pts, 100) for c in chain for row in evaluate_chain(c)]
    together = [row for chain in sweep.plan_tasks(pts, 1) for c in chain for row in evaluate_chain(c)]
    assert sorted(alone, key=lambda r: r.index) == sorted(together, key=lambda r: r.index)


# -- the store --------------------------------------------------------------------------------------
def test_rerun_resumes_and_recomputes_nothing(tmp_path: Path) -> None:
    pts = sweep.grid_points(_grid(noise_multiplier=[1.0, 2.0], sampling_rate=0.02, steps=[10, 100], delta=1e-5))
    first = sweep.run(pts, tmp_path / "s.sqlite", workers=1)
    again = sweep.run(pts, tmp_path / "s.sqlite", workers=1)
    assert (first.written, first.skipped) == (4, 0)
    assert (again.written, again.skipped, again.tasks) == (0, 4, 0)
    more = sweep.grid_points(_grid(noise_multiplier=[1.0, 2.0, 3.0], sampling_rate=0.02, steps=[10, 100], delta=1e-5))
    grown = sweep.run(more, tmp_path / "s.sqlite", workers=1)
    assert (grown.written, grown.skipped) == (2, 4)


def test_a_row_is_written_once(tmp_path: Path) -> None:
    pts = sweep.grid_points(_grid(noise_multiplier=1.0, sampling_rate=0.02, steps=10, delta=1e-5))
    rows = _rows(pts, tmp_path)
    with sweep.Store(tmp_path / "s.sqlite") as store:
        assert store.write(rows) == 0
        assert store.count() == 1


def test_exports_keep_every_value(tmp_path: Path) -> None:
    import csv

    import pyarrow.parquet as pq

    pts = sweep.grid_points(_grid(noise_multiplier=[1.0, 2.0], sampling_rate=0.02, steps=10, delta=1e-5))
    recs = sweep.records(pts, _rows(pts, tmp_path))
    sweep.write_csv(recs, tmp_path / "r.csv")
    sweep.write_parquet(recs, tmp_path / "r.parquet")
    with (tmp_path / "r.csv").open() as fh:
        back = list(csv.DictReader(fh))
    assert [float(r["upper"]) for r in back] == [r["upper"] for r in recs]
    assert pq.read_table(tmp_path / "r.parquet").to_pylist() == recs
    assert '"upper"' in sweep.to_json(recs)


def test_infinite_ends_round_trip_through_the_store(tmp_path: Path) -> None:
    row = sweep.Row("k", 0, 0.0, math.inf, None, "add_remove", None, math.inf)
    with sweep.Store(tmp_path / "s.sqlite") as store:
        store.write([row])
        got = store._db.execute("SELECT upper, width FROM rows").fetchone()
    assert got == (math.inf, math.inf)
