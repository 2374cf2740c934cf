"""``optcomp serve``: the planner's local web page (needs the ``web`` extra: starlette, uvicorn)."""

from __future__ import annotations

import ipaddress

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


@cli.command("serve")
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True, help="TCP port.")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to bind (loopback by default).")
@click.option("--allow-remote", is_flag=True,
              help="Allow binding a non-loopback --host (the page then answers anyone who can reach it).")
def serve_command(port: int, host: str, allow_remote: bool) -> None:
    """Serve the budget planner page on http://HOST:PORT/ (127.0.0.1 only unless --allow-remote)."""
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
    click.echo(f"optcomp planner on http://{host}:{port}/ (Ctrl-C to stop)", err=True)
    uvicorn.run(create_app(), host=host, port=port, log_level="warning")
