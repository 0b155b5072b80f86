"""Code that runs inside the sandbox worker: stdlib only, never imports ``studio``."""
