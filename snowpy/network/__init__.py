"""The network of target nodes and its training engine."""

from __future__ import annotations

from snowpy.network.cloud import Cloud
from snowpy.network.network import Network, NumericalWarning
from snowpy.network.kind import ABSTAIN

__all__ = ["ABSTAIN", "Cloud", "Network", "NumericalWarning"]
