from libc.stdint cimport int32_t, int64_t, uint8_t

from snowpy._core.abi cimport update_fn
from snowpy._core.pool cimport Pool, row_t
from snowpy._core.rules cimport UpdateKernel

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
    double *acc               # NULL, or [n_order, n_targets]: the raw activations before
                              # learning (a network's targets learned apart, in parts)
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
    int64_t *kslot            # a target's link of each row of the example, in updates
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

cdef class Links:
    cdef Pool pool
    cdef readonly bint single
    cdef float *Wf
    cdef float *Uf
    cdef double *Wd
    cdef double *Ud
    cdef object _arrays
    cdef row_t[::1] _rows
    cdef int32_t[::1] _count
    cdef int32_t[::1] _target
    cdef int32_t[::1] _lcount
    cdef int64_t[::1] _meta

cdef struct guard_t:
    # a rule's step run on guarded copies of its buffers (checked mode)
    update_fn fn
    void *user_data
    int violation
    int64_t where

cdef class RuleBinding:
    cdef rule_t rule
    cdef guard_t guard
    cdef readonly bint checked
    cdef readonly UpdateKernel kernel
    cdef double[::1] _params
    cdef double[::1] _planes
    cdef double[:, ::1] _S

cdef class Options:
    cdef options_t opt

cdef class Outcome:
    cdef readonly int64_t processed
    cdef readonly int64_t mistakes
    cdef readonly int64_t updates
    cdef readonly int64_t overflows
    cdef readonly int64_t underflows
    cdef readonly bint nonfinite
    cdef readonly bint failed
    cdef readonly int64_t seen
    cdef readonly int64_t need_room
    cdef readonly int64_t need_queue

cdef outcome_t run_epoch(Links links, const rule_t *rule, const options_t *opt,
                         const batch_t *b, work_t *ws, int64_t seen, int64_t *counts,
                         int64_t n_targets) noexcept nogil
cdef Outcome make_outcome(const outcome_t *o)
