"""What ``GET /metrics`` says, through ``prometheus-client`` (the ``serve`` extra):
requests by route and status, a latency histogram per route, examples learned, the
progressive accuracy of the examples learned (each predicted before it was learned), and
the client's process collector (memory, CPU, open files). Each service has a registry of
its own, so that two in one process (tests, a host program) never share counters."""

from __future__ import annotations

import threading
from typing import Any

__all__ = ["BUCKETS", "Metrics"]

#: Upper bounds of the latency histogram's buckets, in seconds.
BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)


class Metrics:
    """The metrics of one service (thread-safe).

    >>> m = Metrics()
    >>> m.request("/predict", 200, 0.003)
    >>> m.learned(correct=True)
    >>> text = m.render()
    >>> 'snowpy_requests_total{route="/predict",status="200"} 1.0' in text
    True
    >>> 'snowpy_request_seconds_bucket{le="0.005",route="/predict"} 1.0' in text
    True
    >>> "snowpy_progressive_accuracy 1.0" in text
    True
    """

    def __init__(self) -> None:
        from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
        from prometheus_client import ProcessCollector

        self.registry = CollectorRegistry(auto_describe=True)
        self._lock = threading.Lock()
        self.examples = 0
        self.correct = 0
        self._requests = Counter("snowpy_requests", "Requests by route and status.",
                                 ["route", "status"], registry=self.registry)
        self._seconds = Histogram("snowpy_request_seconds", "Time to answer a request.",
                                  ["route"], buckets=BUCKETS, registry=self.registry)
        self._learned = Counter("snowpy_examples_learned", "Examples learned online.",
                                registry=self.registry)
        accuracy = Gauge("snowpy_progressive_accuracy", "Share of the examples learned "
                         "that were predicted right before they were learned.",
                         registry=self.registry)
        accuracy.set_function(lambda: self.correct / self.examples if self.examples else 0.0)
        ProcessCollector(registry=self.registry)

    def request(self, route: str, status: int, seconds: float) -> None:
        self._requests.labels(route, str(status)).inc()
        self._seconds.labels(route).observe(seconds)

    def learned(self, correct: bool) -> None:
        with self._lock:
            self.examples += 1
            self.correct += bool(correct)
        self._learned.inc()

    def render(self) -> str:
        """The exposition in Prometheus' text format."""
        from prometheus_client import generate_latest

        return generate_latest(self.registry).decode()

    @property
    def content_type(self) -> Any:
        from prometheus_client import CONTENT_TYPE_LATEST

        return CONTENT_TYPE_LATEST
