"""Connecting to Dask: an existing client, a scheduler address, or a LocalCluster.

The only module of snowpy that imports ``dask.distributed`` at run time
(``pip install '.[dask]' in snowpy's source folder``).
"""

from __future__ import annotations

import contextlib
import numbers
import os
from collections.abc import Iterator
from typing import Any

from snowpy.exceptions import ConfigurationError

__all__ = ["WORKER_MEMORY", "bytes_moved", "connect", "default_shards", "worker_bytes_sent"]

#: The environment a local cluster's workers start in: glibc keeps the memory they free.
#: Dask's own default (``MALLOC_TRIM_THRESHOLD_=65536``) gives every freed block at the
#: heap's top back to the system; a round makes and frees networks of the same size
#: each time (the restored network, the changes, the next network), and memory given
#: back is faulted in again, a page at a time: 360,000 synthetic documents, 3 rounds on 2
#: workers, 15.6-16.3 s against 14.4-14.7 s, system time 9.1-9.6 s against 7.2-7.8 s, the
#: same model file (docs/benchmarks.md). Blocks below 32 MiB (glibc's largest threshold)
#: come from the heap, and the heap is never trimmed. Set for the workers snowpy starts,
#: whatever this process's environment holds.
WORKER_MEMORY = {"MALLOC_MMAP_THRESHOLD_": str(32 << 20),
                 "MALLOC_TRIM_THRESHOLD_": str(1 << 40)}


def _distributed() -> Any:
    try:
        import distributed
    except ImportError:
        raise ConfigurationError(
            "training on a Dask cluster needs dask.distributed: pip install "
            "'.[dask]' in snowpy's source folder") from None
    return distributed


@contextlib.contextmanager
def connect(cluster: Any = None) -> Iterator[Any]:
    """A ``distributed.Client`` for ``cluster``: a client itself (used as it is), a
    scheduler's address (``"tcp://host:8786"``: a client connected to it), or a number
    of worker processes (a new ``LocalCluster`` of that many, one thread each, closed,
    processes and all, on leaving; ``None``: one)."""
    if hasattr(cluster, "scheduler_info"):  # a client (of any kind of cluster)
        yield cluster
        return
    if not (cluster is None or isinstance(cluster, (str, numbers.Integral))) or \
            isinstance(cluster, bool):
        raise ConfigurationError(
            f"cluster must be a distributed.Client, a scheduler's address or a number of "
            f"workers, got {type(cluster).__name__}")
    distributed = _distributed()
    if isinstance(cluster, str):
        try:
            with distributed.Client(cluster, timeout="20s") as connected:
                yield connected
        except OSError as exc:
            raise ConfigurationError(f"cannot reach the Dask scheduler at {cluster}: "
                                     f"{exc}") from None
        return
    count = 1 if cluster is None else int(cluster)
    if count < 1:
        raise ConfigurationError(f"a local cluster needs at least 1 worker, got {count}")
    import dask

    # (set in this process's environment while the workers start, which they inherit: Dask
    # prefers a value there to its configuration's, and leaves its own there behind it)
    before = {name: os.environ.get(name) for name in WORKER_MEMORY}
    os.environ.update(WORKER_MEMORY)
    try:
        with dask.config.set({f"distributed.nanny.pre-spawn-environ.{name}": value
                              for name, value in WORKER_MEMORY.items()}):
            local_cluster = distributed.LocalCluster(
                n_workers=count, threads_per_worker=1, processes=True,
                dashboard_address=":0", silence_logs=50)
    finally:
        for name, value in before.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
    with local_cluster, distributed.Client(local_cluster) as local:
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


def default_shards(workers: dict[str, Any]) -> int:
    """Shards of a corpus by default: the threads of the workers (``workers``: the
    scheduler's ``scheduler_info()["workers"]``), so that each worker runs a shard's
    task on each of its threads (the epoch is compiled code that lets go of Python's
    lock). No more: each shard's task restores the round's network, and what its epoch
    changed is found and mixed, whatever the shard's size (400,000 synthetic documents,
    3 rounds on 2 workers of a thread: 20.2 s in 2 shards, 23.7 s in 4, the same
    accuracy).

    >>> default_shards({"a": {"nthreads": 1}, "b": {"nthreads": 1}})
    2
    >>> default_shards({"a": {"nthreads": 16}})
    16
    """
    return max(sum(int(info.get("nthreads", 1)) for info in workers.values()), 1)
