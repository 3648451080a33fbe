from snowpy._core.abi cimport similarity_fn, update_fn

cdef class UpdateKernel:
    # an update rule as the engine calls it: a C function of the ABI and its user data
    cdef update_fn fn
    cdef void *user_data
    cdef readonly str name
    cdef readonly str implementation
    cdef object _keep
    cdef public object error   # what a Python rule raised (its return value was -1)

cdef class SimilarityKernel:
    # a dual rule's similarity as the dual engine calls it
    cdef similarity_fn fn
    cdef void *user_data
    cdef readonly str name
    cdef readonly str implementation
    cdef object _keep
    cdef public object error
