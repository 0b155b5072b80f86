"""Entry point of a sandbox worker: ``python -I -S worker_main.py CONFIG_JSON``.

Puts the shims and the guest package on sys.path (nothing else of the host is importable), then
hands over to the request loop.
"""

import json
import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(_HERE, "shims"), _HERE]
sys.dont_write_bytecode = True

from studio_guest.loop import main  # noqa: E402

main(json.loads(sys.argv[1]) if len(sys.argv) > 1 else {})
