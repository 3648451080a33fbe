# Fused types shared by the compiled core's Python-facing functions: the integer
# widths its arrays come in (CSR indices, feature ids, rows).

from libc.stdint cimport int32_t, int64_t

ctypedef fused index_t:
    int32_t
    int64_t

ctypedef fused other_index_t:
    int32_t
    int64_t
