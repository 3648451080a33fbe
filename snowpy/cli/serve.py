"""``snowpy serve MODEL --port 8080``: a model as an HTTP service that keeps learning
(Vowpal Wabbit's ``--daemon``), on Starlette under uvicorn."""

from __future__ import annotations

import errno
import os
import socket
from pathlib import Path
from typing import Annotated

import typer

from snowpy.cli.common import err, handles_errors, model_key
from snowpy.exceptions import ConfigurationError


@handles_errors
def serve(
    model: Annotated[Path, typer.Argument(help="model file to serve")],
    host: Annotated[str, typer.Option(
        help="address to listen on (loopback unless told otherwise)")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="port to listen on")] = 8080,
    state: Annotated[Path | None, typer.Option(
        help="folder of the journal and snapshots (default MODEL.serve)")] = None,
    token_file: Annotated[Path | None, typer.Option(
        help="a file holding the bearer token POST /learn and /forget need (or "
             "SNOWPY_SERVE_TOKEN); without one, they are refused beyond loopback")] = None,
    snapshot_every: Annotated[int, typer.Option(
        help="write a snapshot after this many examples learned")] = 1000,
    snapshot_seconds: Annotated[float, typer.Option(
        help="... or this many seconds after the first example not in one")] = 60.0,
    max_body: Annotated[int, typer.Option(help="largest request body, in bytes")] = 1 << 20,
    max_batch: Annotated[int, typer.Option(help="most documents or examples a request")
                         ] = 1000,
    new_labels: Annotated[bool, typer.Option(
        "--new-labels/--no-new-labels", help="whether /learn takes a label the model does "
        "not know (a mistyped one becomes a class of its own); refused with "
        "--no-new-labels")] = True,
) -> None:
    """Serve MODEL over HTTP, predicting and learning online; no acknowledged example is lost.

    POST /predict, POST /learn (feedback learned online, in a write-ahead journal before
    it is acknowledged), POST /forget (a label forgotten, journaled alike), GET /health,
    GET /metrics (Prometheus). A restart, even after kill -9, recovers the last snapshot
    and the journal."""
    try:
        import prometheus_client  # noqa: F401  (the metrics: the serve extra too)
        import uvicorn

        from snowpy.serving.app import LOOPBACK, make_app
        from snowpy.serving.service import Service
    except ImportError:
        raise ConfigurationError("snowpy serve needs Starlette, uvicorn and "
                                 "prometheus-client: pip install "
                                 "'.[serve]' in snowpy's source folder") from None
    if not 0 <= port <= 65535:
        raise ConfigurationError(f"--port must be 0-65535, got {port}")
    token = os.environ.get("SNOWPY_SERVE_TOKEN") or None
    if token_file is not None:
        try:
            token = token_file.read_text().strip()
        except OSError as exc:
            raise ConfigurationError(f"--token-file {token_file}: {exc.strerror}") from None
        if len(token) < 16:
            raise ConfigurationError(f"--token-file {token_file}: a token of at least 16 "
                                     "characters")
    listening = _bound(host, port)  # (before a word is said: the port is ours)
    service = Service(model, state, snapshot_every=snapshot_every,
                      snapshot_seconds=snapshot_seconds, key=model_key(),
                      new_labels=new_labels)

    def stopped() -> None:
        latest = service.journal.latest_snapshot()
        err(f"stopped: {service.seq:,} examples learned in all; the model as it stands is "
            f"{latest[1]}" if latest is not None else f"stopped: nothing learned; {model} as "
            "it was")

    app = make_app(service, token=token, host=host, max_body=max_body, max_batch=max_batch,
                   on_stop=stopped)
    learning = f"closed: {service.closed}" if service.closed else \
        "needs the bearer token" if token else (
            "open (loopback only)" if host in LOOPBACK else
            "refused (no token beyond loopback)")
    skipped = f", {service.unreplayable:,} of them skipped (they could not be learned)" \
        if service.unreplayable else ""
    err(f"serving {model} on http://{host}:{listening.getsockname()[1]} ({service.seq:,} "
        f"examples learned, {service.replayed:,} replayed from the journal{skipped}; "
        f"/learn {learning}{'' if new_labels or service.closed else ', new labels refused'})")
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", timeout_keep_alive=5,
                                           limit_concurrency=256))
    server.run(sockets=[listening])


def _bound(host: str, port: int) -> socket.socket:
    """A socket listening on ``host:port``, or the one-line reason it cannot."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # (IPPROTO_TCP named: asyncio turns Nagle off only on the connections of a socket that
    # says it is TCP; without it every answer waited 40 ms for a delayed ACK)
    listening = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    listening.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listening.bind((host, port))
    except OSError as exc:
        listening.close()
        if exc.errno == errno.EADDRINUSE:
            raise ConfigurationError(f"port {port} is in use on {host}") from None
        raise ConfigurationError(f"cannot listen on {host}:{port}: "
                                 f"{exc.strerror or exc}") from None
    listening.listen(2048)
    listening.set_inheritable(True)
    return listening
