"""A :class:`~snowpy.Network`'s fitted attributes (scikit-learn's trailing underscores),
read from its engine (:class:`~snowpy.network.engine.Engine`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from snowpy.network.calibrating import fit_progressive
from snowpy.rules.spec import RuleKernel, RuleSpec

if TYPE_CHECKING:  # pragma: no cover
    from snowpy.network.engine import Engine

__all__ = ["LearnedFigures"]


class LearnedFigures:
    """A :class:`~snowpy.Network`'s fitted attributes (scikit-learn's trailing
    underscores), read from its :class:`~snowpy.network.engine.Engine` (``state_``, which raises
    ``NotFittedError`` before training)."""

    @property
    def state_(self) -> Engine:  # pragma: no cover - the network's
        raise NotImplementedError

    @property
    def rule_spec_(self) -> RuleSpec:
        """The update rule's record."""
        return self.state_.spec

    @property
    def rule_params_(self) -> dict[str, Any]:
        """Every rule parameter as used, defaults and derived values included."""
        return self.state_.params

    @property
    def kernel_(self) -> RuleKernel:
        """The rule's compiled kernel."""
        return self.state_.kernel

    @property
    def multilabel_(self) -> bool:
        """Whether the network was trained with a set of labels per example."""
        return self.state_.multilabel

    @property
    def n_features_in_(self) -> int:
        """The width of ``X`` the network takes."""
        return self.state_.n_features

    @property
    def mistakes_(self) -> list[int]:
        """Per epoch (per call for :meth:`partial_fit`), the examples mispredicted."""
        return self.state_.mistakes

    @mistakes_.setter
    def mistakes_(self, per_epoch: list[int]) -> None:
        # (training block by block from a cache: one entry per epoch, not per block)
        self.state_.mistakes = [int(m) for m in per_epoch]

    @property
    def updates_(self) -> list[int]:
        """Per epoch, the target updates made."""
        return self.state_.updates

    @property
    def n_examples_seen_(self) -> int:
        """Examples processed by training, epochs counted."""
        return self.state_.n_examples_seen

    @property
    def overflows_(self) -> int:
        """Weight updates clamped to the largest magnitude kept."""
        return self.state_.overflows

    @property
    def underflows_(self) -> int:
        """Weight updates raised to the smallest magnitude kept."""
        return self.state_.underflows

    @property
    def calibration_(self) -> Any:
        """The sigmoids from scores to probabilities, or None (progressive sigmoids that
        blocks of a stream left behind are fitted again here, when they are asked for,
        from the window alone: what they are does not depend on when they were asked)."""
        state = self.state_
        if state.calibration_due:
            state.calibration_due = False
            if state.progressive.filled:
                fit_progressive(self, state.progressive, warm=False)
        return state.calibration

    @calibration_.setter
    def calibration_(self, calibration: Any) -> None:
        self.state_.calibration = calibration
