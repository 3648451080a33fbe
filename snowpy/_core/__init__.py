"""snowpy's compiled core: the hot loops, compiled ahead of time when snowpy is installed.

Cython modules, one idea each: :mod:`~snowpy._core.hashing` (stable hashes),
:mod:`~snowpy._core.featuremap` (64-bit keys to rows), :mod:`~snowpy._core.tokenize` and
:mod:`~snowpy._core.extract` (the front end), :mod:`~snowpy._core.links` (the link
pool), :mod:`~snowpy._core.engine` (training and scoring), :mod:`~snowpy._core.rules`
(the built-in update rules and the kernel ABIs), :mod:`~snowpy._core.merging`
(distributed mixing) and :mod:`~snowpy._core.reader` (from a file's bytes to features).
Nothing here imports numpy's C API: arrays are read through the buffer protocol, so the
modules build with Cython and a C compiler alone.
"""
