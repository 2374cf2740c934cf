"""Figures: optcomp.plot writes PNG/SVG files; ``optcomp plot`` through optcomp.cli.main."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("matplotlib")

from optcomp.cli import main
from optcomp.fdp import epsilon_delta_tradeoff, gaussian_tradeoff, subsample
from optcomp.plot import plot_composition_comparison, plot_privacy_region, plot_tradeoff

PNG_MAGIC = b"\x89PNG"


def test_plot_tradeoff_png(tmp_path: Path) -> None:
    out = tmp_path / "curves.png"
    plot_tradeoff(
        [("G_1", gaussian_tradeoff(1.0)), ("C_p", subsample(gaussian_tradeoff(2.0), 0.2)),
         ("f_eps_delta", epsilon_delta_tradeoff(1.0, 0.05))],
        path=out,
    )
    assert out.read_bytes()[:4] == PNG_MAGIC


def test_plot_region_and_comparison(tmp_path: Path) -> None:
    r = tmp_path / "region.svg"
    plot_privacy_region(0.1, 0.001, [1, 10], path=r)
    assert b"<svg" in r.read_bytes()[:400]
    c = tmp_path / "compare.png"
    plot_composition_comparison([0.1], 2.0**-25, 50, path=c, points=5)
    assert c.read_bytes()[:4] == PNG_MAGIC


def test_plot_bad_inputs(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="output"):
        plot_tradeoff([("G", gaussian_tradeoff(1.0))], path=tmp_path / "x.pdf")
    with pytest.raises(ValueError, match="k"):
        plot_privacy_region(0.1, 0.0, [0])
    with pytest.raises(ValueError, match="delta_g"):
        plot_composition_comparison([0.1], 0.0, 10)


def test_cli_plot_tradeoff(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "t.png"
    assert main(["plot", "tradeoff", "--gdp", "1", "--eps", "1", "--delta", "0.01", "--output", str(out)]) == 0
    assert out.read_bytes()[:4] == PNG_MAGIC
    assert "wrote" in capsys.readouterr().out


def test_cli_plot_region(tmp_path: Path) -> None:
    out = tmp_path / "r.png"
    assert main(["plot", "region", "--eps", "0.1", "--delta", "0.001", "-k", "1", "-k", "5", "--output", str(out)]) == 0
    assert out.exists()


@pytest.mark.parametrize(
    "argv,needle",
    [
        (["plot", "tradeoff", "--output", "x.png"], "at least one"),
        (["plot", "tradeoff", "--gdp", "-1", "--output", "x.png"], "mu"),
        (["plot", "region", "--eps", "0.1", "--output", "x.gif"], "output"),
        (["plot", "tradeoff", "--gdp", "1"], "output"),
    ],
)
def test_cli_plot_bad_args(argv: list[str], needle: str, capsys: pytest.CaptureFixture[str], tmp_path: Path,
                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and needle in err
