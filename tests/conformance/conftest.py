"""Prints how many studio-vs-platform comparisons ran and agreed (the number the issue asks for).
Under pytest-xdist each worker hands its count to the controller, which prints the sum
(tests/conftest.py: the controller loads no conftest of this folder)."""

from __future__ import annotations

import pytest
from conformance_samples import TALLY

from tests.conftest import write_conformance


def pytest_sessionfinish(session: pytest.Session) -> None:
    output = getattr(session.config, "workeroutput", None)  # set on an xdist worker only
    if output is not None:
        output["conformance"] = TALLY


def pytest_terminal_summary(terminalreporter) -> None:  # type: ignore[no-untyped-def]
    write_conformance(terminalreporter, TALLY)
