"""snowpy inside other frameworks: River (:mod:`snowpy.integrations.river`).

Each module imports its framework when it is imported, and only then: none of
them is a dependency of snowpy.
"""
