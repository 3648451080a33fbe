"""The AROW plugin's compiled step (``src/snowpy_arow/_kernel.pyx``), built when the
plugin is installed."""

from Cython.Build import cythonize
from setuptools import Extension, setup

setup(ext_modules=cythonize(
    [Extension("snowpy_arow._kernel", ["src/snowpy_arow/_kernel.pyx"],
               extra_compile_args=["-O3", "-ffp-contract=off"])],
    quiet=True))
