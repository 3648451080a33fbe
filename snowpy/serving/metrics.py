"""What ``GET /metrics`` says, in Prometheus' text format: requests by route and status,
a latency histogram per route, examples learned, and the progressive accuracy of the
examples learned (each predicted before it was learned)."""

from __future__ import annotations

import threading
from collections import defaultdict

__all__ = ["BUCKETS", "Metrics"]

#: Upper bounds of the latency histogram's buckets, in seconds.
BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)


class Metrics:
    """Counters of one service (thread-safe).

    >>> m = Metrics()
    >>> m.request("/predict", 200, 0.003)
    >>> m.learned(correct=True)
    >>> text = m.render()
    >>> 'snowpy_requests_total{route="/predict",status="200"} 1' in text
    True
    >>> 'snowpy_request_seconds_bucket{route="/predict",le="0.005"} 1' in text
    True
    >>> "snowpy_progressive_accuracy 1.0" in text
    True
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._requests: dict[tuple[str, int], int] = defaultdict(int)
        self._buckets: dict[str, list[int]] = defaultdict(lambda: [0] * len(BUCKETS))
        self._sum: dict[str, float] = defaultdict(float)
        self._count: dict[str, int] = defaultdict(int)
        self.examples = 0
        self.correct = 0

    def request(self, route: str, status: int, seconds: float) -> None:
        with self._lock:
            self._requests[(route, status)] += 1
            buckets = self._buckets[route]
            for i, bound in enumerate(BUCKETS):
                if seconds <= bound:
                    buckets[i] += 1
            self._sum[route] += seconds
            self._count[route] += 1

    def learned(self, correct: bool) -> None:
        with self._lock:
            self.examples += 1
            self.correct += bool(correct)

    def render(self) -> str:
        with self._lock:
            lines = ["# HELP snowpy_requests_total Requests by route and status.",
                     "# TYPE snowpy_requests_total counter"]
            lines += [f'snowpy_requests_total{{route="{route}",status="{status}"}} {count}'
                      for (route, status), count in sorted(self._requests.items())]
            lines += ["# HELP snowpy_request_seconds Time to answer a request.",
                      "# TYPE snowpy_request_seconds histogram"]
            for route in sorted(self._count):
                for bound, count in zip(BUCKETS, self._buckets[route]):
                    lines.append(f'snowpy_request_seconds_bucket{{route="{route}",'
                                 f'le="{bound}"}} {count}')
                lines.append(f'snowpy_request_seconds_bucket{{route="{route}",le="+Inf"}} '
                             f"{self._count[route]}")
                lines.append(f'snowpy_request_seconds_sum{{route="{route}"}} '
                             f"{self._sum[route]:.6f}")
                lines.append(f'snowpy_request_seconds_count{{route="{route}"}} '
                             f"{self._count[route]}")
            lines += ["# HELP snowpy_examples_learned_total Examples learned online.",
                      "# TYPE snowpy_examples_learned_total counter",
                      f"snowpy_examples_learned_total {self.examples}",
                      "# HELP snowpy_progressive_accuracy Share of the examples learned "
                      "that were predicted right before they were learned.",
                      "# TYPE snowpy_progressive_accuracy gauge",
                      f"snowpy_progressive_accuracy "
                      f"{self.correct / self.examples if self.examples else 0.0}"]
        return "\n".join(lines) + "\n"
