"""The ``optcomp`` command line: one small module per command, wired here.

Every command parses its arguments, makes one public library call, and formats the answer (a rich
table, or ``--json`` for scripts). No mathematics lives in the CLI. A bad argument — a ``ValueError``
from the library, a usage error from click, an ``OSError`` for a file that cannot be read or written, or
a ``NotImplementedError`` for an unsupported combination, a ``MemoryError`` for sizes beyond the
machine, an ``OverflowError`` from an engine that left the float range — is reported as one line on
stderr with exit status 2, never a traceback. ``optcomp`` or ``optcomp plot`` without a command print
their help (exit status 0).

Commands run under ``numpy.errstate(invalid="raise")``: a NaN produced anywhere in an engine (inf − inf,
0·inf) stops the command with one line instead of flowing into a printed answer; overflow to ±inf and
underflow to 0 are IEEE arithmetic the engines rely on and stay silent (no RuntimeWarning noise).

**Adding a command** is one line in :data:`COMMANDS`: its name, the module that defines it, and the
one-line help that ``optcomp --help`` shows. The module attaches the command to the group with
``@cli.command("NAME")`` (or ``@cli.group("NAME")``; ``from optcomp.cli._common import cli``) and is
imported only when that command runs, so ``optcomp --help``/``--version`` import no command module and
neither numpy nor scipy (``tests/test_cli_startup.py`` checks both, and that each line below matches the
command's own first docstring sentence). Subcommands of a group (``optcomp ledger backup``) and new
options of a command need nothing here.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence

import click

from optcomp.cli._common import MAX_JSON_DEPTH, accuracy_advice, cli

#: Every top-level command: name → (module that defines it, its one-line help for ``optcomp --help``).
#: One line per command; the module is imported on first use (see the module docstring).
COMMANDS: dict[str, tuple[str, str]] = {
    "account": ("optcomp.cli.account", "Certified ε(δ) or δ(ε) bracket of a composition of mechanisms."),
    "compose": ("optcomp.cli.compose",
                "Compare basic, advanced (DRV and lecture-notes forms), KOV and optimal composition."),
    "dpsgd": ("optcomp.cli.account",
              ("Certified ε bracket of DP-SGD (default: Poisson subsampling, add/remove relation), or the σ / "
               "number of steps that meets a target ε (--target-epsilon).")),
    "ledger": ("optcomp.cli.ledger",
               "A persistent privacy ledger: charge every release before it runs (docs/ledger.md)."),
    "matrix": ("optcomp.cli.matrix",
               "Matrix-factorization mechanisms: sensitivity, un-amplified ε, amplified BandMF (docs/matrix.md)."),
    "plan": ("optcomp.cli.plan",
             "Split a plan's (ε, δ) budget across its statistics (TOML or JSON plan FILE; see docs/planner.md)."),
    "plot": ("optcomp.cli.plot",
             "Draw trade-off curves, privacy regions or the composition-theorem comparison."),
    "region": ("optcomp.cli.compose",
               "Export the boundary β(α) of the composed privacy region (type I error α, type II error β)."),
    "reproduce": ("optcomp.cli.reproduce",
                  "Regenerate a paper's figure and numbers (NAME), or all of them (--all)."),
    "select": ("optcomp.cli.select",
               "Certified ε(δ) or δ(ε) of releasing the best of K runs of a base (private selection, hyperparameter tuning)."),
    "serve": ("optcomp.cli.serve",
              ("Serve the budget planner page on http://HOST:PORT/ (127.0.0.1 only unless --allow-remote), and a "
               "ledger's releases, spent and remaining, read-only, on /ledger.")),
    "sweep": ("optcomp.cli.sweep",
              "Evaluate a grid of DP-SGD configurations (TOML/JSON), every row a certified bracket."),
    "tradeoff": ("optcomp.cli.fdp",
                 ("Print or export a trade-off curve β = f(α) (type II error at type I error α): of μ-GDP or "
                  "(ε, δ)-DP mechanisms, or of what you ran — a DP-SGD run, --mech specs or a --dp-event tree "
                  "(the attack TPR of your training run at each --fpr).")),
}
cli.lazy_commands.update(COMMANDS)


def _register() -> None:
    """Import every command module now (tests that walk all commands; ``main`` never needs it)."""
    for module, _ in COMMANDS.values():
        importlib.import_module(module)


def _is_grid_refusal(exc: ValueError) -> bool:
    """Whether ``exc`` is the engines' ``GridTooLargeError`` about the grid (not a mechanism's loss scale).

    Neither can be raised before ``optcomp._numerics`` is loaded, so it is looked up, not imported: the
    CLI's start imports no numpy. A :class:`~optcomp._numerics.LossScaleError` (a mechanism beyond the
    engines' range) is a kind of grid refusal whose message already names the noise parameter.
    """
    numerics = sys.modules.get("optcomp._numerics")
    return (numerics is not None and isinstance(exc, numerics.GridTooLargeError)
            and not isinstance(exc, numerics.LossScaleError))


def _error(message: str) -> int:
    """Report ``message`` as exactly one stderr line (any newline flattened); exit status 2."""
    click.echo("optcomp: error: " + " ".join(message.splitlines()), err=True)
    return 2


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``optcomp`` console script. Returns the process exit status."""
    try:  # the group's callback puts the command under numpy.errstate (cli._common.cli)
        cli.main(args=list(argv) if argv is not None else None, prog_name="optcomp", standalone_mode=False)
    except click.exceptions.Exit as exc:
        return int(exc.exit_code)
    except click.exceptions.Abort:
        click.echo("optcomp: aborted", err=True)
        return 1
    except click.exceptions.NoArgsIsHelpError as exc:  # bare ``optcomp`` / ``optcomp plot``: the help, readable
        click.echo(exc.ctx.get_help())
        return 0
    except click.ClickException as exc:
        return _error(exc.format_message())
    except ValueError as exc:
        if _is_grid_refusal(exc):  # the library names Accuracy's fields: name the --accuracy option
            return _error(accuracy_advice(str(exc)))
        return _error(str(exc))
    except RecursionError:  # a nested input that a reader walked recursively (files are checked up front)
        return _error(f"an input is nested too deeply (at most {MAX_JSON_DEPTH} levels of lists/objects)")
    except OSError as exc:  # an input file that cannot be read or an output file that cannot be written
        where = f": {exc.filename}" if exc.filename is not None else ""
        return _error(f"{exc.strerror or exc}{where}")
    except NotImplementedError as exc:  # a combination the library refuses rather than approximates
        return _error(f"not supported: {exc}")
    except MemoryError as exc:  # a size (-k, --points, grid) far beyond this machine
        detail = f" ({exc})" if str(exc) else ""
        return _error(f"not enough memory{detail}; use a smaller -k/--points or a coarser accuracy")
    except OverflowError as exc:  # an engine's exp/power left the float range on extreme parameters
        return _error(f"a value of this computation is beyond the floating-point range ({exc}); "
                      "use less extreme parameters")
    except FloatingPointError as exc:  # numpy produced a NaN inside an engine (errstate above)
        return _error(f"these parameters are beyond what the engines can evaluate ({exc}); "
                      "use less extreme parameters")
    except ArithmeticError as exc:  # the output guard found a NaN: a bug, reported without a traceback
        click.echo("optcomp: " + " ".join(str(exc).splitlines()), err=True)
        return 1
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
