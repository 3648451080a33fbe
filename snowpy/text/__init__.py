"""The text front end: normalise, tokenise, extract and hash features.

>>> from snowpy.text import Featurizer
>>> float(Featurizer(bits=10).transform(["a b a"]).toarray().sum())
2.0
"""

from __future__ import annotations

from snowpy.text.featurizer import Featurizer
from snowpy.text.hashing import feature_seed, murmurhash3_32

__all__ = ["Featurizer", "feature_seed", "murmurhash3_32"]
