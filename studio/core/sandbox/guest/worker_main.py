"""Entry point of a sandbox worker: ``python -I -S worker_main.py CONFIG_JSON``, or the standalone
app's ``grader-studio-worker CONFIG_JSON`` (this file frozen with the standard library alone).

Puts the shims and the guest package on sys.path (nothing else of the host is importable; an
OpenAI python criterion's worker also gets the allowed packages' directory, last), then hands over
to the request loop.
"""

import json
import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(_HERE, "shims"), _HERE]
sys.dont_write_bytecode = True
if getattr(sys, "frozen", False):  # the bundle's worker: its launcher's variables are not the grader's
    _original = os.environ.pop("LD_LIBRARY_PATH_ORIG", None)
    os.environ.pop("LD_LIBRARY_PATH", None)
    if _original is not None:
        os.environ["LD_LIBRARY_PATH"] = _original
    for _name in [n for n in os.environ if n.startswith("_PYI_")]:
        del os.environ[_name]

_CONFIG = json.loads(sys.argv[1]) if len(sys.argv) > 1 else {}
if _CONFIG.get("packages"):  # the allowed third-party packages (sandbox/packages.py), after the stdlib
    sys.path.append(_CONFIG["packages"])
    # the worker may start no thread or process (RLIMIT_NPROC 0): OpenBLAS (numpy, scipy) would start
    # its pool on import and raise SIGINT when it cannot, so its numeric libraries run single-threaded
    for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[_name] = "1"

from studio_guest.loop import main  # noqa: E402

main(_CONFIG)
