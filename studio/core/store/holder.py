"""What a repository's ``of`` accepts besides a bare Engine: anything holding one (the Library).

A protocol, so the repositories the Library builds never import the Library module back.
"""

from __future__ import annotations

from typing import Protocol

from sqlalchemy import Engine


class HasEngine(Protocol):
    @property
    def engine(self) -> Engine: ...
