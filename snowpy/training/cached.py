"""Epochs from a cache of featurised blocks (:class:`~snowpy.training.FeatureCache`), in
memory bounded by the model and one block (Vowpal Wabbit's ``--cache_file``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from snowpy.exceptions import ConfigurationError
from snowpy.network.training import run_epochs
from snowpy.training.cache import FeatureCache

__all__ = ["train_from_cache"]


def train_from_cache(classifier: Any, cache: FeatureCache, featurizer: Any, *,
                     epochs: int | None = None, seed: int | None = 0,
                     on_epoch: Callable[[int, int], None] | None = None) -> list[int]:
    """Train ``classifier`` afresh for ``epochs`` passes (its own by default) over the
    blocks of ``cache``, built with ``featurizer``; returns the mistakes per epoch.

    The first epoch goes in the corpus's order (its mistakes are progressive: made
    before learning each document), the later ones in a seeded random order of
    blocks and of documents within each. Training stops after an epoch without an
    update when the classifier's ``early_stop`` says so; ``eligibility="percent:p"`` and
    ``discard`` apply at the end, as after ``fit``. ``on_epoch(epoch, mistakes)``
    is called after each epoch. An interruption (``KeyboardInterrupt``) leaves the
    cache as it was.
    """
    epochs = int(classifier.epochs) if epochs is None else int(epochs)
    if epochs < 1:
        raise ConfigurationError(f"epochs must be at least 1, got {epochs}")
    network = classifier.begin(featurizer)
    rng = np.random.default_rng(seed)
    per_epoch: list[int] = []
    n_blocks = len(cache.blocks)

    def one_epoch(epoch: int) -> int:
        order = range(n_blocks) if epoch == 0 else rng.permutation(n_blocks).tolist()
        before = len(getattr(network, "mistakes_", []))
        updates_before = sum(getattr(network, "updates_", []))
        for X, labels in cache.read(order, None if epoch == 0 else rng):
            network.partial_fit(X, labels)
        per_epoch.append(sum(network.mistakes_[before:]))
        if on_epoch is not None:
            on_epoch(epoch, per_epoch[-1])
        return sum(network.updates_) - updates_before

    run_epochs(epochs, bool(classifier.early_stop), one_epoch)
    network.mistakes_ = per_epoch
    network.prune()
    return per_epoch
