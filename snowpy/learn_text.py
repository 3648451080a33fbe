"""A document learned in one compiled call: featurise and learn, for ``learn_one``.

The front end's one-document row (:func:`snowpy.text.single._words_row`) and
the network's one-example step (:func:`snowpy.network.fastpath.learn_example`)
run inside one compiled function: the row never comes back to Python as
arrays, and Python pays one call instead of two. It serves
:meth:`snowpy.SnowClassifier.learn_one` when the front end is word n-grams
only (the default); anything out of the ordinary (a buffer to grow, invalid
UTF-8) is left to the two-call path, which handles it.
"""

from __future__ import annotations

from snowpy._jit import jit
from snowpy.network.fastpath import learn_example
from snowpy.text.single import _words_row

__all__ = ["learn_text"]


@jit
def learn_text(b, raw, lowercase, strip_marks, mask, mode, l2, bits, a, kernel, targets,
               next_row, policy, min_count, multiplicative, min_magnitude, max_magnitude,
               theta, pos_thickness, neg_thickness, bias, multilabel, constraint, seen,
               scores):  # pragma: no cover - compiled
    """Learn one document's UTF-8 bytes: ``(done, invalid bytes)`` followed by
    :func:`~snowpy.network.fastpath.learn_example`'s figures.

    ``done`` is False when the document was not learned here (a buffer too
    small, invalid bytes): the caller takes the two-call path.
    """
    b.offsets[1] = raw.shape[0]
    nnz, invalid = _words_row(
        raw, b.offsets, b.classes, b.lower, b.ascii_word, lowercase, strip_marks, b.out,
        b.starts, b.ends, b.doc_ptr, b.invalid, b.params, b.seeds, mask, b.ids, b.ptrs, mode,
        l2, bits, b.indptr, b.indices, b.values, b.scratch)
    if nnz < 0 or invalid or nnz >= a.ws[0].shape[0]:
        return False, invalid, 0, next_row, 0, 0, 0, 0, 0, 0, seen, 0
    r = learn_example(a, kernel, b.indices[:nnz], b.values[:nnz], targets, next_row, policy,
                      min_count, multiplicative, min_magnitude, max_magnitude, theta,
                      pos_thickness, neg_thickness, bias, multilabel, constraint, seen, scores)
    return True, invalid, r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9]
