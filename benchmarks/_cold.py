"""Cold timings: the policy every benchmark here follows, and the tools that implement it.

**Policy** (README, "Benchmarks"): every timing in the README, in docs/ and in ``benchmarks/RESULTS*.md`` is a
*cold-process* number at the *default accuracy*, unless its row names its own accuracy. A timed cell is
cold when it runs in a fresh interpreter that has imported the libraries (import time is not accounting time,
and is excluded) and has computed nothing else: no warm-up call, no earlier row, every cache of optcomp empty.
A repeated cell is the minimum over several cold runs (one fresh interpreter each), never a warm re-run.

**Caches** optcomp relies on, all emptied by :func:`clear_caches` (``tests/test_benchmarks_cold.py`` checks that
it finds every one the source defines):

* ``functools`` caches (``lru_cache``/``cache``) of module-level functions and class attributes
  (``optimal._split``, ``mechanisms._allocation_grid``/``_allocation_lower``, ``ledger._currency``, …);
* module-level containers that start empty and fill as the process works (``planner._noise._MU_MEMO``,
  ``_threads._CONTROLLER``): found from the source (an assignment of ``{}``, ``[]``, ``set()`` or ``dict()``
  at module level);
* disk caches: a child started by :func:`run_child` gets a fresh, empty ``XDG_CACHE_HOME`` (and
  ``OPTCOMP_CACHE_DIR``), removed afterwards, so that no cache file of an earlier cell (or of another run) is
  read. Per-object caches (a ``Composition``'s routes and grids, ``cached_property``) die with their object:
  every cell builds its own.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import importlib
import json
import os
import pkgutil
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

#: Single-threaded BLAS/OpenMP, set before numpy is imported (rows that compare one core with one core).
SINGLE_THREAD_ENV = {
    "OPENBLAS_NUM_THREADS": "1",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "BLIS_NUM_THREADS": "1",
    "VECLIB_MAXIMUM_THREADS": "1",
    "NUMEXPR_NUM_THREADS": "1",
}

#: The optcomp modules every accounting cell may reach (the queries floor and everything below it): imported
#: by :func:`import_libraries` before any timing. Applications (matrix, planner, ledger, sweep, interop) are
#: imported where a script names them.
CORE = ("optcomp", "optcomp._numerics", "optcomp._rounding", "optcomp._inverse", "optcomp._inverse_many",
        "optcomp._threads", "optcomp.mechanisms", "optcomp.pld", "optcomp.optimal", "optcomp.fdp", "optcomp.bounds",
        "optcomp.rdp", "optcomp.region", "optcomp.composition", "optcomp.queries", "optcomp.engines",
        "optcomp.calibrate", "optcomp.dpsgd")


def import_libraries(*extra: str) -> None:
    """Import the optcomp modules a cell may reach (:data:`CORE`, and every submodule of those packages) and
    the ``extra`` modules (an optcomp application, a peer), so that the timed call pays no import; then
    empty the caches (an import that computes something counts for no one)."""
    for name in (*CORE, *extra):
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError:
            if name in extra:
                raise
            continue  # an older tree without this module (benchmarks/before_after.py)
        if name.startswith("optcomp.") and hasattr(module, "__path__"):
            for info in pkgutil.walk_packages(module.__path__, name + "."):
                with contextlib.suppress(ImportError):  # an optional dependency (psycopg, distributed) missing
                    importlib.import_module(info.name)
    clear_caches()


@functools.cache
def _empty_containers(path: str) -> list[str]:
    """Names bound at module level to an empty ``{}``/``[]``/``set()``/``dict()``/``list()`` in ``path``."""
    try:
        tree = ast.parse(Path(path).read_text(encoding="utf-8"))
    except (OSError, SyntaxError):
        return []
    names = []
    for node in tree.body:
        target, value = None, None
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        elif isinstance(node, ast.AnnAssign):
            target, value = node.target, node.value
        if not isinstance(target, ast.Name) or value is None:
            continue
        empty_literal = isinstance(value, (ast.Dict, ast.List, ast.Set)) and not getattr(
            value, "keys" if isinstance(value, ast.Dict) else "elts")
        empty_call = (isinstance(value, ast.Call) and isinstance(value.func, ast.Name)
                      and value.func.id in ("dict", "list", "set") and not value.args and not value.keywords)
        if empty_literal or empty_call:
            names.append(target.id)
    return names


def _cached_callables(module: Any) -> Iterable[tuple[str, Any]]:
    """(qualified name, object) of every functools-cached function of ``module``, at module level and as
    class attributes of the classes it defines."""
    for name, obj in vars(module).items():
        if callable(getattr(obj, "cache_clear", None)) and getattr(obj, "__module__", None) == module.__name__:
            yield f"{module.__name__}.{name}", obj
        if isinstance(obj, type) and obj.__module__ == module.__name__:
            for attr, member in vars(obj).items():
                inner = getattr(member, "__func__", member)
                if callable(getattr(inner, "cache_clear", None)):
                    yield f"{module.__name__}.{name}.{attr}", inner


def clear_caches() -> list[str]:
    """Empty every process-wide cache of the loaded optcomp modules (module docstring); the qualified
    names of what was cleared."""
    cleared: list[str] = []
    for module_name, module in sorted(sys.modules.items()):
        if not (module_name == "optcomp" or module_name.startswith("optcomp.")) or module is None:
            continue
        for qualified, fn in _cached_callables(module):
            fn.cache_clear()
            cleared.append(qualified)
        path = getattr(module, "__file__", None)
        for name in _empty_containers(path) if path else []:
            container = getattr(module, name, None)
            if hasattr(container, "clear"):
                container.clear()
                cleared.append(f"{module_name}.{name}")
    return cleared


def timed(fn: Callable[[], Any]) -> tuple[Any, float, float]:
    """``(fn(), wall seconds, CPU seconds)`` of one call, the caches emptied just before it."""
    clear_caches()
    c0, w0 = time.process_time(), time.perf_counter()
    out = fn()
    return out, time.perf_counter() - w0, time.process_time() - c0


def run_child(argv: Sequence[str], *, timeout: float, env: dict[str, str] | None = None,
              cwd: Path | None = None) -> dict[str, Any]:
    """Run ``python *argv`` in a fresh interpreter with an empty disk-cache directory; its last stdout line
    parsed as JSON, or ``{"error": ...}`` (timeout, exit status, no JSON)."""
    cache = tempfile.mkdtemp(prefix="optcomp-bench-cache-")
    full = dict(os.environ if env is None else env)
    full.update(XDG_CACHE_HOME=cache, OPTCOMP_CACHE_DIR=cache)
    try:
        res = subprocess.run([sys.executable, *argv], capture_output=True, text=True, timeout=timeout, env=full,
                             check=False, cwd=cwd)
    except subprocess.TimeoutExpired:
        return {"error": f"timeout {timeout:g} s"}
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    lines = res.stdout.strip().splitlines()
    if res.returncode != 0 or not lines:
        return {"error": (res.stderr.strip().splitlines() or [f"exit {res.returncode}"])[-1][:200]}
    try:
        out: dict[str, Any] = json.loads(lines[-1])
    except json.JSONDecodeError:
        return {"error": f"no JSON result: {lines[-1][:120]}"}
    return out


#: A cell: a function of the JSON arguments whose call is timed, or a pair (prepare, run): ``prepare(*args)``
#: builds the inputs untimed (a plan, a ledger file), then ``run(prepared)`` is timed.
Cell = Callable[..., Any] | tuple[Callable[..., Any], Callable[[Any], Any]]


def cold_cells(cells: dict[str, Cell], argv: Sequence[str], peers: Sequence[str] = ()) -> bool:
    """The child side of a script's cold cells: if ``argv`` is ``--cold NAME JSON_ARGS``, import optcomp and
    the ``peers`` modules, time ``cells[NAME]`` once on the arguments (:func:`timed`; see :data:`Cell`), print
    ``{"value", "wall", "cpu"}`` as JSON and return True; otherwise return False (the script runs as the
    parent)."""
    if len(argv) != 3 or argv[0] != "--cold":
        return False
    import_libraries(*peers)
    cell, args = cells[argv[1]], json.loads(argv[2])
    if isinstance(cell, tuple):
        prepare, run = cell
        prepared = prepare(*args)
        value, wall, cpu = timed(lambda: run(prepared))
    else:
        value, wall, cpu = timed(lambda: cell(*args))
    print(json.dumps({"value": value, "wall": wall, "cpu": cpu}))
    return True


def cold(script: str, name: str, *args: Any, timeout: float = 600.0, env: dict[str, str] | None = None,
         repeats: int = 1, repeat_below_s: float = 1.0) -> dict[str, Any]:
    """Parent side: run cell ``name`` of ``script`` with ``args`` in a fresh interpreter (:func:`cold_cells`);
    repeated up to ``repeats`` times (each cold) while a run takes under ``repeat_below_s``, keeping the
    minimum wall and CPU times. ``{"value", "wall", "cpu", "runs"}`` or ``{"error"}``."""
    best: dict[str, Any] | None = None
    for run in range(1, repeats + 1):
        out = run_child([script, "--cold", name, json.dumps(list(args))], timeout=timeout, env=env)
        if "error" in out:
            return out if best is None else best
        if best is None:
            best = dict(out)
        else:
            best["wall"], best["cpu"] = min(best["wall"], out["wall"]), min(best["cpu"], out["cpu"])
        best["runs"] = run
        if out["wall"] >= repeat_below_s:
            break
    assert best is not None
    return best
