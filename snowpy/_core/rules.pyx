"""The built-in update rules, compiled, and the rule ABI's kernel objects.

An update rule reaches the engine as a C function of one signature (``abi.pxd``;
``docs/plugins.md``): the built-in rules below, a numba ``@cfunc``, a plugin's own C
or Cython function exported in a ``PyCapsule``, or, slowly, a plain Python function
called through a trampoline. A :class:`Kernel` holds one of them, or a similarity (the
other ABI, which a plugin's network of support vectors calls); calling it from Python
with arrays runs it once (tests, the conformance suite).

The arithmetic of each built-in rule is documented where the rule is declared
(``snowpy/rules/``).
"""

from cpython.pycapsule cimport PyCapsule_GetName, PyCapsule_GetPointer, PyCapsule_IsValid
from libc.math cimport exp, log
from libc.stdint cimport int64_t, uintptr_t

import numpy as np

from snowpy._core.abi cimport (
    SNOWPY_SIMILARITY_SIGNATURE,
    SNOWPY_UPDATE_SIGNATURE,
    similarity_fn,
    update_fn,
)

#: The signature a rule's PyCapsule must carry as its name.
UPDATE_SIGNATURE = (<bytes>SNOWPY_UPDATE_SIGNATURE).decode()
#: The signature a similarity's PyCapsule must carry as its name.
SIMILARITY_SIGNATURE = (<bytes>SNOWPY_SIMILARITY_SIGNATURE).decode()


# --------------------------------------------------------------- built-in rules
cdef int perceptron(double *w, int64_t m, int64_t n_planes, double *state, int64_t n_targets,
                    int64_t state_size, int64_t t, double y, double activation,
                    const double *vals, double sqnorm, const double *params, int64_t n_params,
                    void *user_data) noexcept nogil:
    cdef double step = params[0] * y
    cdef int64_t k
    for k in range(m):
        w[k * n_planes] += step * vals[k]
    return 0


cdef int winnow(double *w, int64_t m, int64_t n_planes, double *state, int64_t n_targets,
                int64_t state_size, int64_t t, double y, double activation,
                const double *vals, double sqnorm, const double *params, int64_t n_params,
                void *user_data) noexcept nogil:
    # params = [alpha, beta, floor, threshold_relative, theta]
    cdef double factor = params[0] if y > 0 else params[1]
    cdef double floor = params[2]
    cdef double theta = params[4]
    cdef double log_factor, v, new
    cdef int64_t k
    if params[3] > 0.0 and theta > 0.0 and activation > 0.0:
        factor *= theta / activation
    log_factor = log(factor)
    for k in range(m):
        v = vals[k]
        new = w[k * n_planes] * (factor if v == 1.0 else exp(v * log_factor))
        w[k * n_planes] = new if new > floor else floor
    return 0


cdef int balanced_winnow(double *w, int64_t m, int64_t n_planes, double *state,
                         int64_t n_targets, int64_t state_size, int64_t t, double y,
                         double activation, const double *vals, double sqnorm,
                         const double *params, int64_t n_params,
                         void *user_data) noexcept nogil:
    # params = [alpha, beta]
    cdef double up = params[0] if y > 0 else params[1]
    cdef double down = params[1] if y > 0 else params[0]
    cdef double log_up = log(up)
    cdef double log_down = log(down)
    cdef double v
    cdef int64_t k
    for k in range(m):
        v = vals[k]
        if v == 1.0:
            w[k * n_planes] *= up
            w[k * n_planes + 1] *= down
        else:
            w[k * n_planes] *= exp(v * log_up)
            w[k * n_planes + 1] *= exp(v * log_down)
    return 0


cdef int aggressive(double *w, int64_t m, int64_t n_planes, double *state, int64_t n_targets,
                    int64_t state_size, int64_t t, double y, double activation,
                    const double *vals, double sqnorm, const double *params, int64_t n_params,
                    void *user_data) noexcept nogil:
    # params = [theta, margin]
    cdef double step
    cdef int64_t k
    if sqnorm <= 0.0:
        return 0
    step = (params[0] + y * params[1] - activation) / sqnorm
    for k in range(m):
        w[k * n_planes] += step * vals[k]
    return 0


cdef int passive_aggressive(double *w, int64_t m, int64_t n_planes, double *state,
                            int64_t n_targets, int64_t state_size, int64_t t, double y,
                            double activation, const double *vals, double sqnorm,
                            const double *params, int64_t n_params,
                            void *user_data) noexcept nogil:
    # params = [theta, C, variant] (variant 0 PA, 1 PA-I, 2 PA-II)
    cdef double loss = 1.0 - y * (activation - params[0])
    cdef double c = params[1]
    cdef double tau, step
    cdef int64_t k
    if loss <= 0.0 or sqnorm <= 0.0:
        return 0
    if params[2] == 0.0:
        tau = loss / sqnorm
    elif params[2] == 1.0:
        tau = loss / sqnorm
        if c < tau:
            tau = c
    else:
        tau = loss / (sqnorm + 0.5 / c)
    step = tau * y
    for k in range(m):
        w[k * n_planes] += step * vals[k]
    return 0


cdef int naive_bayes(double *w, int64_t m, int64_t n_planes, double *state, int64_t n_targets,
                     int64_t state_size, int64_t t, double y, double activation,
                     const double *vals, double sqnorm, const double *params,
                     int64_t n_params, void *user_data) noexcept nogil:
    # state[t] = [positives, shown]; plane 0 the count, plane 1 log(count / positives)
    cdef double *s = state + t * state_size
    cdef double n
    cdef int64_t k
    s[1] += 1.0
    if y > 0.0:
        s[0] += 1.0
        n = s[0]
        for k in range(m):
            w[k * n_planes] += 1.0
            w[k * n_planes + 1] = log(w[k * n_planes] / n)
    return 0


cdef int normalised_winnow(double *w, int64_t m, int64_t n_planes, double *state,
                           int64_t n_targets, int64_t state_size, int64_t t, double y,
                           double activation, const double *vals, double sqnorm,
                           const double *params, int64_t n_params,
                           void *user_data) noexcept nogil:
    # u_i *= exp(eta y x_i); log s_t -= log Z (params = [eta], state[t, 0] = log s_t)
    cdef double eta = params[0]
    cdef double scale = exp(state[t * state_size])
    cdef double z = 1.0
    cdef double factor
    cdef int64_t k
    for k in range(m):
        factor = exp(eta * y * vals[k])
        z += scale * w[k * n_planes] * (factor - 1.0)
        w[k * n_planes] *= factor
    if z > 0.0:
        state[t * state_size] -= log(z)
    return 0


# ---------------------------------------------------------------- Python rules
cdef int python_update(double *w, int64_t m, int64_t n_planes, double *state,
                       int64_t n_targets, int64_t state_size, int64_t t, double y,
                       double activation, const double *vals, double sqnorm,
                       const double *params, int64_t n_params,
                       void *user_data) noexcept nogil:
    """The trampoline of a rule written in Python: the GIL taken, the buffers wrapped
    as numpy arrays (no copy), the function called; an exception is kept on the kernel
    and stops the training."""
    with gil:
        kernel = <UpdateKernel>user_data
        try:
            kernel._keep(_array2(w, m, n_planes), _array2(state, n_targets, state_size),
                         t, y, activation, _array1(<double *>vals, m), m, sqnorm,
                         _array1(<double *>params, n_params))
        except BaseException as exc:  # kept, then raised by the engine's caller
            kernel.error = exc
            return -1
    return 0


cdef object _array1(double *data, int64_t n):
    if n <= 0:
        return np.empty(0)
    return np.asarray(<double[:n]>data)


cdef object _array2(double *data, int64_t rows, int64_t columns):
    if rows <= 0 or columns <= 0:
        return np.empty((max(rows, 0), max(columns, 0)))
    return np.asarray(<double[:rows, :columns]>data)


cdef double python_similarity(const int64_t *a_ids, const double *a_vals, int64_t a_n,
                              const int64_t *b_ids, const double *b_vals, int64_t b_n,
                              const double *params, int64_t n_params,
                              void *user_data) noexcept nogil:
    with gil:
        kernel = <SimilarityKernel>user_data
        if kernel.error is not None:
            return 0.0
        try:
            return float(kernel._keep(_ids(a_ids, a_n), _array1(<double *>a_vals, a_n),
                                      _ids(b_ids, b_n), _array1(<double *>b_vals, b_n),
                                      _array1(<double *>params, n_params)))
        except BaseException as exc:
            kernel.error = exc
            return 0.0


cdef object _ids(const int64_t *data, int64_t n):
    if n <= 0:
        return np.empty(0, np.int64)
    return np.asarray(<const int64_t[:n]>data)


# -------------------------------------------------------------- kernel objects
cdef class Kernel:
    """A function of one of the kernel ABIs (``abi.pxd``; ``docs/plugins.md``) and its user
    data, as the engine calls it: an update rule's step (:class:`UpdateKernel`) or a
    similarity (:class:`SimilarityKernel`).

    Make one with :meth:`from_capsule` (a C or Cython function in a ``PyCapsule`` named
    by the ABI's signature), :meth:`from_address` (a numba ``@cfunc``'s address) or
    :meth:`from_python` (a plain function called through a trampoline, which takes the
    GIL and wraps the buffers on each call: microseconds, not nanoseconds, for
    prototyping). Calling one runs its function once on arrays (tests, the conformance
    suite).
    """

    #: The ABI (``"update"`` or ``"similarity"``), its signature (a capsule's name), what
    #: a kernel of it is called and where its contract is written.
    abi = ""
    signature = ""
    noun = ""
    contract = ""

    def __cinit__(self):
        self.fn = NULL
        self.user_data = NULL
        self.error = None

    cdef void *_trampoline(self):
        return NULL

    @classmethod
    def from_capsule(cls, capsule, str name="", object keep=None):
        """A kernel from a ``PyCapsule`` holding a function pointer of the ABI, named by
        its signature (:data:`UPDATE_SIGNATURE`, :data:`SIMILARITY_SIGNATURE`)."""
        cdef Kernel kernel = cls.__new__(cls)
        if not PyCapsule_IsValid(capsule, PyCapsule_GetName(capsule)):
            raise TypeError(f"the {cls.noun}'s capsule must be a valid PyCapsule")
        cdef const char *found = PyCapsule_GetName(capsule)
        if found == NULL or (<bytes>found).decode() != cls.signature:
            shown = "no name" if found == NULL else repr((<bytes>found).decode())
            raise TypeError(f"the {cls.noun}'s capsule must be named {cls.signature!r} (the "
                            f"{cls.abi} ABI's signature), got {shown}")
        kernel.fn = PyCapsule_GetPointer(capsule, found)
        kernel.name = name
        kernel.implementation = "c"
        kernel._keep = (capsule, keep)
        return kernel

    @classmethod
    def from_address(cls, uintptr_t address, str name="", str implementation="numba",
                     object keep=None, uintptr_t user_data=0):
        """A kernel from the address of a function of the ABI (a numba ``@cfunc``'s
        ``.address``); ``keep`` is kept alive as long as the kernel (the cfunc)."""
        cdef Kernel kernel = cls.__new__(cls)
        if address == 0:
            raise ValueError(f"the {cls.noun}'s address must not be 0")
        kernel.fn = <void *>address
        kernel.user_data = <void *>user_data
        kernel.name = name
        kernel.implementation = implementation
        kernel._keep = keep
        return kernel

    @classmethod
    def from_python(cls, function, str name=""):
        """A kernel written as a Python function of the ABI's array form (an update's
        ``update(w, S, t, y, activation, vals, m, sqnorm, params)``, a similarity's
        ``similarity(a_ids, a_vals, b_ids, b_vals, params)``), called through a
        trampoline (slow: for prototyping)."""
        cdef Kernel kernel = cls.__new__(cls)
        if not callable(function):
            raise TypeError(f"a Python {cls.noun} must be a function")
        kernel.fn = kernel._trampoline()
        kernel.user_data = <void *>kernel
        kernel.name = name or getattr(function, "__name__", "")
        kernel.implementation = "python"
        kernel._keep = function
        return kernel

    @property
    def address(self):
        """The C function's address (an integer)."""
        return <uintptr_t>self.fn

    @property
    def user_data_address(self):
        """The address of the user data the function is called with (a Python kernel's:
        the kernel itself), for a plugin's compiled loop that calls it."""
        return <uintptr_t>self.user_data

    @property
    def function(self):
        """The Python function of a Python kernel (None for compiled ones)."""
        return self._keep if self.implementation == "python" else None

    def __repr__(self):
        return f"<{type(self).__name__} {self.name!r} ({self.implementation})>"

    def __reduce__(self):
        if self.implementation == "builtin":
            return (type(self).builtin, (self.name,))
        raise TypeError(f"the {self.implementation} {self.noun} {self.name!r} cannot be "
                        "pickled; pickle the rule's name and build it again")


cdef class UpdateKernel(Kernel):
    """An update rule's step (the update ABI); the built-in rules are this module's
    ``PERCEPTRON``, ``WINNOW``... Calling it runs the rule once on arrays: ``kernel(w, S,
    t, y, activation, vals, m, sqnorm, params)`` with ``w`` ``float64[m, planes]`` and
    ``S`` ``float64[targets, state_size]`` changed in place."""

    abi = "update"
    signature = UPDATE_SIGNATURE
    noun = "update kernel"
    contract = "snowpy.rules.spec"

    cdef void *_trampoline(self):
        return <void *>python_update

    @staticmethod
    def builtin(str name):
        """The built-in rule of that name."""
        return _BUILTIN[name]

    def __call__(self, double[:, ::1] w, double[:, ::1] S, int64_t t, double y,
                 double activation, const double[::1] vals, int64_t m, double sqnorm,
                 const double[::1] params):
        """Run the rule once on target ``t`` (``w[:m]`` and ``S[t]`` change in place)."""
        cdef int status
        cdef double empty = 0.0
        if m > w.shape[0] or m > vals.shape[0]:
            raise ValueError("m is larger than w or vals")
        self.error = None
        with nogil:
            status = (<update_fn>self.fn)(
                &w[0, 0] if w.shape[0] and w.shape[1] else &empty, m, w.shape[1],
                &S[0, 0] if S.shape[0] and S.shape[1] else &empty, S.shape[0], S.shape[1], t,
                y, activation, &vals[0] if vals.shape[0] else &empty, sqnorm,
                &params[0] if params.shape[0] else &empty, params.shape[0], self.user_data)
        if status != 0:
            error, self.error = self.error, None
            if error is not None:
                raise error
            raise RuntimeError(f"the update kernel {self.name!r} returned {status}")


cdef class SimilarityKernel(Kernel):
    """A similarity of two sparse examples (the similarity ABI, which the kernel
    Perceptron's network of support vectors calls): ``kernel(a_ids, a_vals, b_ids,
    b_vals, params) -> float`` from Python."""

    abi = "similarity"
    signature = SIMILARITY_SIGNATURE
    noun = "similarity"
    contract = "docs/plugins.md"

    cdef void *_trampoline(self):
        return <void *>python_similarity

    def __call__(self, const int64_t[::1] a_ids, const double[::1] a_vals,
                 const int64_t[::1] b_ids, const double[::1] b_vals,
                 const double[::1] params):
        cdef double result
        cdef int64_t no_id = 0
        cdef double no_val = 0.0
        if a_ids.shape[0] != a_vals.shape[0] or b_ids.shape[0] != b_vals.shape[0]:
            raise ValueError("ids and strengths must have the same length")
        self.error = None
        with nogil:
            result = (<similarity_fn>self.fn)(
                &a_ids[0] if a_ids.shape[0] else &no_id,
                &a_vals[0] if a_vals.shape[0] else &no_val, a_ids.shape[0],
                &b_ids[0] if b_ids.shape[0] else &no_id,
                &b_vals[0] if b_vals.shape[0] else &no_val, b_ids.shape[0],
                &params[0] if params.shape[0] else &no_val, params.shape[0], self.user_data)
        if self.error is not None:
            error, self.error = self.error, None
            raise error
        return result


# ------------------------------------------- the built-in rules as kernels
# (after the classes: a class method is bound where the module defines it)
cdef dict _BUILTIN = {}


cdef object _builtin(str name, update_fn fn):
    _BUILTIN[name] = UpdateKernel.from_address(<uintptr_t>fn, name, "builtin")
    return _BUILTIN[name]


PERCEPTRON = _builtin("perceptron", perceptron)
WINNOW = _builtin("winnow", winnow)
BALANCED_WINNOW = _builtin("balanced-winnow", balanced_winnow)
AGGRESSIVE = _builtin("aggressive", aggressive)
PASSIVE_AGGRESSIVE = _builtin("passive-aggressive", passive_aggressive)
NAIVE_BAYES = _builtin("naive-bayes", naive_bayes)
NORMALISED_WINNOW = _builtin("normalised-winnow", normalised_winnow)
