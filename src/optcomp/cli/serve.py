"""``optcomp serve``: the planner's local web page (needs the ``web`` extra: starlette, uvicorn)."""

from __future__ import annotations

import ipaddress
import socket

import click

from optcomp.cli._common import cli

_LOOPBACK_NAMES = {"localhost"}


def is_loopback(host: str) -> bool:
    """Whether ``host`` names this machine only (127.0.0.0/8, ::1 or ``localhost``)."""
    if host in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_port_free(host: str, port: int) -> None:
    """Refuse (ValueError, one line) a ``--host``/``--port`` that cannot be bound, before announcing the URL.

    The check binds a socket to the address and closes it at once (``SO_REUSEADDR`` as uvicorn sets it, so
    a port in TIME_WAIT is not refused); port 0 asks the system for a free port and is always accepted.
    """
    if port == 0:
        return
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise ValueError(f"--host {host} cannot be resolved ({exc.strerror})") from exc
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
        except OSError as exc:
            raise ValueError(
                f"--port {port} on {host} cannot be bound ({exc.strerror}); another program is using it: "
                "choose another --port"
            ) from exc


def _check_ledger(location: str, schema: str | None) -> None:
    """Refuse (ValueError, one line) a ``--ledger`` that is not a readable ledger, before serving a page
    that would only say so."""
    from optcomp.ledger import Ledger, StoreError

    try:
        Ledger.open(location, schema=schema, read_only=True).close()
    except (ValueError, StoreError) as exc:
        raise ValueError(f"--ledger: {exc}") from None


@cli.command("serve")
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True, help="TCP port.")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to bind (loopback by default).")
@click.option("--allow-remote", is_flag=True,
              help="Allow binding a non-loopback --host (the page then answers anyone who can reach it).")
@click.option("--ledger", "ledger_path", default=None,
              help="A ledger to show read-only at /ledger: a file, or a postgresql:// conninfo (default: "
                   "$OPTCOMP_LEDGER; docs/ledger.md).")
@click.option("--ledger-schema", default=None,
              help="PostgreSQL only: the schema that holds the --ledger (default: $OPTCOMP_LEDGER_SCHEMA, else "
                   "optcomp_ledger).")
def serve_command(port: int, host: str, allow_remote: bool, ledger_path: str | None = None,
                  ledger_schema: str | None = None) -> None:
    """Serve the budget planner page on http://HOST:PORT/ (127.0.0.1 only unless --allow-remote), and a
    ledger's releases, spent and remaining, read-only, on /ledger."""
    if not is_loopback(host):
        if not allow_remote:
            raise ValueError(f"--host {host} is not a loopback address; pass --allow-remote to bind it anyway")
        click.echo(f"optcomp: warning: serving on {host}, reachable from other machines; the planner has no "
                   "authentication", err=True)
    try:
        import uvicorn

        from optcomp.web import create_app
    except ImportError as exc:  # the web extra is not installed
        raise NotImplementedError(f"optcomp serve needs the web extra (pip install 'optcomp[web]'): {exc}") from exc
    check_port_free(host, port)
    if ledger_path is not None:
        _check_ledger(ledger_path, ledger_schema)
    elif ledger_schema is not None:
        raise ValueError("--ledger-schema names the schema of a --ledger postgresql://… location; give --ledger too")
    click.echo(f"optcomp planner on http://{host}:{port}/ (Ctrl-C to stop)", err=True)
    if ledger_path is not None:
        click.echo(f"optcomp ledger page on http://{host}:{port}/ledger (read-only)", err=True)
    uvicorn.run(create_app(ledger=ledger_path, ledger_schema=ledger_schema), host=host, port=port,
                log_level="warning")
