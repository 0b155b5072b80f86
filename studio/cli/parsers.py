"""The type of the command table each command module's ``register(sub)`` adds its parsers to."""

from __future__ import annotations

import argparse
from typing import TypeAlias

#: what ``ArgumentParser.add_subparsers()`` returns; argparse keeps the class's name private, its
#: stub types it by the parsers it makes (a string: the class is not subscriptable at run time)
Subparsers: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"
