"""Connecting to Dask: an existing client, a scheduler address, or a LocalCluster.

The only module of snowpy that imports ``dask.distributed`` at run time
(``pip install "snowpy-learn[dask]"``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from snowpy.exceptions import ConfigurationError

__all__ = ["bytes_moved", "connect", "worker_bytes_sent"]


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
                                  dashboard_address=":0", silence_logs=50) as cluster, \
            distributed.Client(cluster) as local:
        yield local


def worker_bytes_sent(client: Any) -> dict[str, int]:
    """Bytes each worker has sent the others so far (Dask's own count), by address."""
    def sent(dask_worker: Any) -> int:
        return int(getattr(dask_worker, "transfer_outgoing_bytes_total", 0))

    return {str(address): int(count) for address, count in client.run(sent).items()}


def bytes_moved(before: dict[str, int], after: dict[str, int]) -> int:
    """The bytes sent between two counts: each worker's own increase, a worker lost
    meanwhile counting for nothing (its count left the sum, not the network) and a new
    worker from zero.

    >>> bytes_moved({"a": 10, "b": 50}, {"a": 25})  # (b was lost)
    15
    """
    return sum(max(count - before.get(address, 0), 0) for address, count in after.items())
