"""Memory that grows without being touched: the link pool's arrays.

numpy's ``ndarray.resize`` fills the part it adds with zeros, which brings every page
of it into memory at once: a pool that grows by a quarter for room it may never use
(the room one long example could need) was resident whole. A :class:`Block` is memory
from ``malloc`` that grows with ``realloc`` (glibc moves the pages of a large block
with ``mremap``, copying nothing and touching nothing): the new part comes into memory
page by page as links are written there.

numpy arrays are views of a block (``numpy.ndarray(shape, dtype, buffer=block)``, which
keeps the block as its base); the caller moves a block only when no array but the one
it replaces refers to it (:func:`snowpy.network.links._resized` counts the references),
and a block never moves while a buffer of it is held (``BufferError``).
"""

from libc.stdlib cimport free, malloc, realloc


cdef class Block:
    """``nbytes`` bytes of memory, uninitialised, that :meth:`resize` can grow or shrink
    while no view of it is held."""

    cdef char *data
    cdef Py_ssize_t size
    cdef Py_ssize_t exports
    cdef Py_ssize_t shape[1]
    cdef Py_ssize_t strides[1]

    def __cinit__(self, Py_ssize_t nbytes):
        if nbytes < 0:
            raise ValueError("a block holds zero bytes or more")
        self.data = <char *>malloc(nbytes if nbytes > 0 else 1)
        if self.data == NULL:
            raise MemoryError(f"no memory for {nbytes:,} bytes")
        self.size = nbytes
        self.exports = 0

    def __dealloc__(self):
        free(self.data)

    @property
    def nbytes(self):
        """Bytes held."""
        return self.size

    @property
    def address(self):
        """Where the block's memory starts (moves with :meth:`resize`)."""
        return <size_t>self.data

    def resize(self, Py_ssize_t nbytes):
        """Hold ``nbytes`` bytes: the first ones as they were, any new ones
        uninitialised. Raises ``BufferError`` while a buffer of the block is held."""
        cdef char *moved
        if self.exports:
            raise BufferError("a block cannot move while an array views it")
        if nbytes < 0:
            raise ValueError("a block holds zero bytes or more")
        moved = <char *>realloc(self.data, nbytes if nbytes > 0 else 1)
        if moved == NULL:
            raise MemoryError(f"no memory for {nbytes:,} bytes")
        self.data = moved
        self.size = nbytes

    def __getbuffer__(self, Py_buffer *view, int flags):
        self.shape[0] = self.size
        self.strides[0] = 1
        view.buf = self.data
        view.obj = self
        view.len = self.size
        view.readonly = 0
        view.itemsize = 1
        view.format = "B"
        view.ndim = 1
        view.shape = self.shape
        view.strides = self.strides
        view.suboffsets = NULL
        view.internal = NULL
        self.exports += 1

    def __releasebuffer__(self, Py_buffer *view):
        self.exports -= 1
