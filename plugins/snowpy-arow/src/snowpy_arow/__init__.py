"""AROW update rule for snowpy (see :mod:`snowpy_arow.plugin`)."""

from snowpy_arow.plugin import AROW, arow_update

__all__ = ["AROW", "arow_update"]
__version__ = "0.1.0"
