"""Training modes as library calls: what ``snowpy train`` does, reachable from Python.

* **In memory**: :meth:`snowpy.SnowClassifier.fit` (texts), or
  :meth:`~snowpy.SnowClassifier.fit_rows` (featurised documents, as the compiled
  reader gives them: :func:`snowpy.files.read_rows`).
* **A stream**, one document at a time with progressive validation:
  :func:`learn_stream`.
* **From a cache of featurised blocks on disk**, several epochs over a corpus
  larger than memory: a :class:`FeatureCache`, which
  :meth:`snowpy.SnowClassifier.fit` takes in place of texts.
* **On a Dask cluster**: :func:`snowpy.distributed.fit`.

The command line parses options and reports; these do the training.
"""

from __future__ import annotations

from snowpy.training.cache import BLOCK_DOCS, FeatureCache
from snowpy.training.stream import Progressive, learn_stream

__all__ = ["BLOCK_DOCS", "FeatureCache", "Progressive", "learn_stream"]
