"""Prints how many studio-vs-platform comparisons ran and agreed (the number the issue asks for)."""

from __future__ import annotations

from conformance_samples import TALLY


def pytest_terminal_summary(terminalreporter) -> None:  # type: ignore[no-untyped-def]
    if TALLY:
        terminalreporter.write_sep("-", "conformance: comparisons with the platforms' own code")
        for platform, (made, agreed) in sorted(TALLY.items()):
            terminalreporter.write_line(f"{platform}: {agreed}/{made} agree ({100.0 * agreed / made:.2f}%)")
