"""The training epoch: one compiled loop over a CSR matrix and the link pool.

:func:`run` (compiled ahead of time, :mod:`snowpy._core.engine`) takes four objects,
as scikit-learn's ``_plain_sgd`` takes a weight vector, a data set and a loss: the
pool's :class:`Links`, the :class:`RuleBinding` (the rule's C function, its numbers,
planes and state), the :class:`Options` (link policy, threshold, thick separator,
bias...) and the examples; it returns an :class:`Outcome`. The rule's update is a C
function of one ABI (:mod:`snowpy.records.kernels`) called through a pointer: one
loop serves every rule, built-in or third-party, at the same speed, with no Python or
pluggy call per example.

Per example ``i`` (in the order given):

1. gather the active rows and strengths, the bias first (with its strength)
   when on; count the rows' activity when eligibility needs it (SNoW ``-e``);
   a row is *eligible* once its count reaches ``min_count``;
2. the activation of every target from its links: ``absent * sum_k v_k +
   sum_k v_k * sum_{links of r_k} (w - absent)``, where ``absent`` is the
   effective weight of a missing link (0 for ``POSITIVE``, the initial
   effective weight otherwise);
3. the network's prediction before learning (winner-take-all over the
   allowed targets, or for multi-label networks every target at or above
   ``theta``) and whether it was a mistake;
4. create links (SNoW's sparse network): with ``POSITIVE`` every eligible
   active row is linked to each target the example is positive for, with
   ``ALL`` to every target it is shown to; a new link's initial weight joins
   the target's activation from here on (the prediction was made without
   it: the example's label must not leak into it);
5. for every allowed target, SNoW's test: a positive example needs
   ``activation >= theta + thickness``, a negative one ``activation < theta -
   negative_thickness``; otherwise the target's weights on the example's
   eligible rows are gathered (a missing link at its initial weights with
   ``TOUCHED``; skipped with ``POSITIVE``) and the rule's kernel updates them.
   With ``constraint`` (SNoW's constraint classification, ``-O +``) the test
   is relative: every other allowed target whose activation is at least the
   true target's minus the thickness is demoted, and the true target
   promoted once if there was any;
6. the updated weights are checked and written back: magnitudes clamped into
   ``[min_magnitude, max_magnitude]`` (a multiplicative rule's weight that
   reached zero is raised to the floor: an underflow), counted, never
   silent; NaN stops the epoch. ``TOUCHED`` creates the link of a weight the
   update changed. Averaged weights are kept with the usual trick ``U +=
   c * delta``, so that the average is ``W - U / c``.

Nothing is searched for. A dense row (linked to every target, in target
order: :mod:`snowpy.network.blocks`) holds target ``t``'s link at offset
``t``, and is scored as a plain vector. The links of the other rows that
belong to the targets an example needs (those that get links, and those an
update calls for) are threaded onto a list per target (``head[t]``,
``nxt[q]``) in one pass, so creating a target's missing links and gathering
its weights walk that target's links of the example and nothing else. Links
are appended to their row's block and keep their offset in it, so the lists
stay valid when a block moves; a block completed out of order is sorted
after the example.

The pool must have room for the links an example may create; when it has
not, the epoch stops before that example and reports the room it needs
(``Outcome.need_room``): the caller grows the pool and continues from there.
"""

from __future__ import annotations

from snowpy._core.engine import POLICIES, Links, Options, Outcome, RuleBinding, Workspace, run

__all__ = ["ALL", "POLICIES", "POSITIVE", "SIGNED", "TOUCHED", "Links", "Options", "Outcome",
           "RuleBinding", "Workspace", "run"]

#: Link policies (``links=`` of :class:`snowpy.Network`), as the engine numbers them.
POSITIVE = POLICIES["positive"]
TOUCHED = POLICIES["touched"]
ALL = POLICIES["all"]
SIGNED = POLICIES["signed"]
