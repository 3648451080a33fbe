"""Epochs from a cache of featurised blocks (:class:`~snowpy.training.FeatureCache`), in
memory bounded by the model, a block and a bucket (Vowpal Wabbit's ``--cache_file``)."""

from __future__ import annotations

from typing import Any

from snowpy.training.cache import FeatureCache

__all__ = ["train_from_cache"]


def train_from_cache(classifier: Any, cache: FeatureCache, featurizer: Any, *,
                     progress: Any = None) -> list[int]:
    """Train ``classifier`` afresh from the blocks of ``cache``, built with
    ``featurizer``; returns the mistakes per epoch.

    The network learned is the one ``classifier.fit`` learns from the same documents in
    memory (``Network.fit(cache)``): the same shuffle in every epoch, the
    first included, the same early stop, ``eligibility="percent:p"`` and ``discard``.
    ``progress`` is a :class:`~snowpy.Progress` or ``progress(epoch, done, total,
    mistakes)``. An interruption (``KeyboardInterrupt``) leaves the cache as it was.
    """
    if featurizer.idf:  # (the blocks are weighed by the cached documents' frequencies)
        cache.weigh = featurizer.fit(frequencies=cache.frequencies).weighed
    network = classifier.begin(featurizer)
    network.fit(cache, progress=progress)
    return list(network.mistakes_)
