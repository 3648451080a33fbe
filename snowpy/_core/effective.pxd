"""A link's effective weight: the one definition, shared by the batch scoring
(:mod:`snowpy._core.scoring`) and the one-example path (:mod:`snowpy._core.online`), so
that one example scores exactly as a batch scores it."""

from libc.stdint cimport int64_t

ctypedef fused plane_t:
    float
    double


cdef inline double delta(const plane_t *W, const plane_t *U, int64_t j, Py_ssize_t n,
                         const double *planes, double seen, bint averaging, bint round32,
                         double absent) noexcept nogil:
    """Slot ``j``'s effective weight minus the absent weight: ``sum_p planes[p] * (W[j, p]
    - U[j, p] / seen)`` (the averaged weights when ``averaging``), rounded to float32 when
    ``round32``."""
    cdef double effective = 0.0
    cdef double plane
    cdef Py_ssize_t q
    for q in range(n):
        if planes[q] == 0.0:
            continue
        plane = W[j * n + q]
        if averaging:
            plane -= <double>U[j * n + q] / seen
        effective += planes[q] * plane
    if round32:
        effective = <float>effective
    return effective - absent
