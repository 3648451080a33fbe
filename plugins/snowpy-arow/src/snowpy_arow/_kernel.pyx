# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""AROW's step as a C function of snowpy's update ABI, exported in a PyCapsule.

A plugin's own compiled module: the signature is snowpy's (``docs/plugins.md``),
declared here with plain C types, so the plugin needs nothing of snowpy's to build.
"""

from cpython.pycapsule cimport PyCapsule_New
from libc.stdint cimport int64_t

cdef extern from *:
    """
    static const char *ABI = "int (double *, int64_t, int64_t, double *, int64_t, int64_t, int64_t, double, double, const double *, double, const double *, int64_t, void *)";
    """
    const char *ABI


cdef int arow(double *w, int64_t m, int64_t n_planes, double *state, int64_t n_targets,
              int64_t state_size, int64_t t, double y, double activation, const double *vals,
              double sqnorm, const double *params, int64_t n_params,
              void *user_data) noexcept nogil:
    # params = [theta, r]; plane 0 the mean, plane 1 the variance
    cdef double margin = y * (activation - params[0])
    cdef double confidence = 0.0
    cdef double beta, alpha, sigma, v
    cdef int64_t k
    if margin >= 1.0:
        return 0
    for k in range(m):
        confidence += w[k * n_planes + 1] * vals[k] * vals[k]
    beta = 1.0 / (confidence + params[1])
    alpha = (1.0 - margin) * beta
    for k in range(m):
        sigma = w[k * n_planes + 1]
        v = vals[k]
        w[k * n_planes] += alpha * y * sigma * v
        w[k * n_planes + 1] = sigma - beta * sigma * sigma * v * v
    return 0


def update_capsule():
    """The step, as snowpy's engine takes a compiled rule."""
    return PyCapsule_New(<void *>arow, ABI, NULL)
