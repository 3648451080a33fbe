"""The kernel Perceptron plugin's compiled loops (``src/snowpy_kernel_perceptron/_dual.pyx``:
scoring and learning with support vectors), built when the plugin is installed."""

from Cython.Build import cythonize
from setuptools import Extension, setup

setup(ext_modules=cythonize(
    [Extension("snowpy_kernel_perceptron._dual", ["src/snowpy_kernel_perceptron/_dual.pyx"],
               extra_compile_args=["-O3", "-ffp-contract=off"])],
    compiler_directives={"language_level": "3", "boundscheck": False, "wraparound": False,
                         "cdivision": True, "initializedcheck": False},
    quiet=True))
