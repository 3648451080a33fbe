"""Connecting to Dask: an existing client, a scheduler address, or a LocalCluster.

The only module of snowpy that imports ``dask.distributed`` at run time
(``pip install "snowpy-learn[dask]"``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from snowpy.exceptions import ConfigurationError

__all__ = ["connect", "worker_bytes_sent"]


def _distributed() -> Any:
    try:
        import distributed
    except ImportError:
        raise ConfigurationError(
            "training on a Dask cluster needs dask.distributed: pip install "
            "'snowpy-learn[dask]'") from None
    return distributed


@contextlib.contextmanager
def connect(client: Any = None, *, workers: int | None = None,
            scheduler: str | None = None) -> Iterator[Any]:
    """A ``distributed.Client``: ``client`` itself, one connected to ``scheduler``
    (``tcp://host:8786``), or one of a new ``LocalCluster`` of ``workers`` processes
    with one thread each (closed, processes and all, on leaving)."""
    given = sum(x is not None for x in (client, workers, scheduler))
    if given > 1:
        raise ConfigurationError("give one of a client, a number of workers or a scheduler "
                                 "address")
    if client is not None:
        yield client
        return
    distributed = _distributed()
    if scheduler is not None:
        try:
            with distributed.Client(scheduler, timeout="20s") as connected:
                yield connected
        except OSError as exc:
            raise ConfigurationError(f"cannot reach the Dask scheduler at {scheduler}: "
                                     f"{exc}") from None
        return
    count = 1 if workers is None else int(workers)
    if count < 1:
        raise ConfigurationError(f"--workers must be at least 1, got {count}")
    with distributed.LocalCluster(n_workers=count, threads_per_worker=1, processes=True,
                                  dashboard_address=":0", silence_logs=40) as cluster, \
            distributed.Client(cluster) as local:
        yield local


def worker_bytes_sent(client: Any) -> int:
    """Bytes the workers have sent one another so far (Dask's own count)."""
    def sent(dask_worker: Any) -> int:
        return int(getattr(dask_worker, "transfer_outgoing_bytes_total", 0))

    return sum(client.run(sent).values())
