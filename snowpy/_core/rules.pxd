from snowpy._core.abi cimport similarity_fn, update_fn

cdef class Kernel:
    # a function of one of the kernel ABIs (update_fn, similarity_fn) and its user data
    cdef void *fn
    cdef void *user_data
    cdef readonly str name
    cdef readonly str implementation
    cdef object _keep
    cdef public object error   # what a Python kernel raised (it returned -1, or 0.0)
    cdef void *_trampoline(self)

cdef class UpdateKernel(Kernel):
    pass

cdef class SimilarityKernel(Kernel):
    pass
