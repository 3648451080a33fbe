# The update rule's C ABI (docs/plugins.md): one plain C function per rule, the same
# slot for a built-in rule, a numba @cfunc and a plugin's own C or Cython module.
#
#   int update(double *w, int64_t m, int64_t n_planes,
#              double *state, int64_t n_targets, int64_t state_size,
#              int64_t target, double y, double activation,
#              const double *vals, double sqnorm,
#              const double *params, int64_t n_params, void *user_data)
#
# w: the target's weights on the example's m active features, row k at
# w + k * n_planes (the rule updates them in place); state: every target's rule state,
# target t's at state + t * state_size (the rule may change its target's); y: +1.0
# promote, -1.0 demote; activation: the target's activation before the update (bias
# included, threshold not subtracted); vals: the m strengths; sqnorm: their sum of
# squares; params: the rule's packed numbers. Returns 0, or non-zero to stop the
# training with an error.
#
# A similarity of two sparse examples (a plugin's network of support vectors calls it):
#
#   double similarity(const int64_t *a_ids, const double *a_vals, int64_t a_n,
#                     const int64_t *b_ids, const double *b_vals, int64_t b_n,
#                     const double *params, int64_t n_params, void *user_data)

from libc.stdint cimport int64_t

ctypedef int (*update_fn)(double *w, int64_t m, int64_t n_planes, double *state,
                          int64_t n_targets, int64_t state_size, int64_t target, double y,
                          double activation, const double *vals, double sqnorm,
                          const double *params, int64_t n_params,
                          void *user_data) noexcept nogil

ctypedef double (*similarity_fn)(const int64_t *a_ids, const double *a_vals, int64_t a_n,
                                 const int64_t *b_ids, const double *b_vals, int64_t b_n,
                                 const double *params, int64_t n_params,
                                 void *user_data) noexcept nogil

#: The signature strings a PyCapsule names (scipy's LowLevelCallable does the same).
cdef extern from *:
    """
    #define SNOWPY_UPDATE_SIGNATURE "int (double *, int64_t, int64_t, double *, int64_t, int64_t, int64_t, double, double, const double *, double, const double *, int64_t, void *)"
    #define SNOWPY_SIMILARITY_SIGNATURE "double (const int64_t *, const double *, int64_t, const int64_t *, const double *, int64_t, const double *, int64_t, void *)"
    """
    const char *SNOWPY_UPDATE_SIGNATURE
    const char *SNOWPY_SIMILARITY_SIGNATURE
