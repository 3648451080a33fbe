"""The network of target nodes and its training engine."""

from __future__ import annotations

from snowpy.network.network import Network, NumericalWarning

__all__ = ["Network", "NumericalWarning"]
