"""Is there a display to open the window on? Asked before Qt is imported.

Without one, Qt's xcb plugin aborts the process (exit 134) with a message that blames
``libxcb-cursor0`` whether or not it is installed. The platform Qt would use is the one
``QT_QPA_PLATFORM`` names (a ``;``-separated list of fallbacks), else Wayland or X11: each needs its
display variable; the platforms that draw nowhere (``offscreen``, ``minimal``, ``vnc`` ...) need none.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping

#: Qt platform plugins that need no X11 or Wayland display
NO_DISPLAY_NEEDED = frozenset({"offscreen", "minimal", "minimalegl", "vnc", "eglfs", "linuxfb", "vkkhrdisplay"})
#: the environment variables a platform plugin finds its display by
DISPLAY_VARIABLES = {"xcb": ("DISPLAY",), "wayland": ("WAYLAND_DISPLAY", "WAYLAND_SOCKET"),
                     "wayland-egl": ("WAYLAND_DISPLAY", "WAYLAND_SOCKET")}

NO_DISPLAY_MESSAGE = (
    "grader-studio: there is no display to open the window on ({why}); run it in a desktop session, "
    "under `xvfb-run grader-studio ...`, or with QT_QPA_PLATFORM=offscreen for scripts (the command line "
    "needs no display).")


def no_display_reason(env: Mapping[str, str] | None = None, system: str | None = None) -> str | None:
    """Why the window cannot open here (a sentence for the user), or None when it can."""
    env = os.environ if env is None else env
    system = sys.platform if system is None else system
    if not (system.startswith("linux") or "bsd" in system):
        return None  # macOS and Windows always have their own platform plugin
    requested = [p.split(":")[0].strip() for p in env.get("QT_QPA_PLATFORM", "").split(";") if p.strip()]
    candidates = requested or ["wayland", "xcb"]
    for name in candidates:
        if name in NO_DISPLAY_NEEDED:
            return None
        variables = DISPLAY_VARIABLES.get(name)
        if variables is None or any(env.get(v) for v in variables):
            return None  # a plugin we do not know: let Qt decide
    wanted = sorted({v for name in candidates for v in DISPLAY_VARIABLES.get(name, ())} - {"WAYLAND_SOCKET"})
    why = f"{wanted[0]} is not set" if len(wanted) == 1 else f"neither {' nor '.join(wanted)} is set"
    return NO_DISPLAY_MESSAGE.format(why=why)
