"""Grader Studio. ``__version__`` is the one place the version is written: pyproject.toml reads it
(``[tool.setuptools.dynamic]``), ``grader-studio --version`` prints it, and packaging/build names
the release tarball after it."""

__version__ = "0.1.0"
