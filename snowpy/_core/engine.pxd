from libc.stdint cimport int32_t, int64_t, uint8_t

from snowpy._core.abi cimport update_fn
from snowpy._core.pool cimport Pool

cdef enum:
    POSITIVE = 0
    TOUCHED = 1
    ALL = 2
    SIGNED = 3

cdef struct options_t:
    # how a network trains: resolved once, read by every example
    int policy
    int64_t min_count
    bint multiplicative
    double min_magnitude
    double max_magnitude
    double theta
    double pos_thickness
    double neg_thickness
    double bias
    bint multilabel
    bint constraint

cdef struct rule_t:
    # the rule as the engine applies it
    update_fn update
    void *user_data
    const double *params
    int64_t n_params
    const double *planes
    int64_t n_planes
    int kind                 # 1: one plane of coefficient 1; 2: w+ - w-; 0: any
    double init_w[8]         # initial and absent weights as the pool stores them
    double absent_w[8]
    double initial           # their effective weights
    double absent
    double *S
    int64_t state_size

cdef struct batch_t:
    # the examples of one call
    const int64_t *indptr
    const int32_t *rows
    const double *vals
    const int64_t *order
    int64_t n_order
    const int64_t *y_indptr
    const int32_t *y_targets
    const int64_t *a_indptr   # NULL: every target sees every example
    const int32_t *a_targets
    double *scores            # NULL, or [n_order, n_targets]: scores before learning
    bint counting
    bint creating

cdef struct outcome_t:
    # what a run did (the engine's named result)
    int64_t processed
    int64_t mistakes
    int64_t updates
    int64_t overflows
    int64_t underflows
    int64_t seen
    int64_t need_room
    int64_t need_queue
    bint nonfinite
    bint failed

cdef struct work_t:
    int64_t width
    int64_t n_targets
    int64_t n_planes
    int64_t queue
    int64_t *row_buf
    double *val_buf
    uint8_t *eligible
    uint8_t *dense
    uint8_t *grown
    int64_t *kmark
    int64_t *open_k
    double *wbuf
    double *vbuf
    int64_t *kbuf
    int64_t *jbuf
    double *new_w
    double *new_u
    double *acc
    int64_t *stamp
    int64_t *allowed_stamp
    int64_t *head
    int64_t *listed
    int64_t *needed
    int64_t *qk
    int64_t *qo
    int64_t *nxt
    int64_t mark
    int64_t tag

cdef class Workspace:
    cdef work_t w
    cdef int _allocate(self, int64_t width, int64_t n_targets, int64_t n_planes,
                       int64_t queue) except -1
