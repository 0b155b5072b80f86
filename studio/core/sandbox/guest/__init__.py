"""Files mounted read-only into the sandbox (a package only so that wheels ship them)."""
