"""The network of target nodes: what it learns (its engine), and how (its driver)."""

from __future__ import annotations

from snowpy.network.cloud import Cloud
from snowpy.network.network import ABSTAIN, Network, NumericalWarning

__all__ = ["ABSTAIN", "Cloud", "Network", "NumericalWarning"]
