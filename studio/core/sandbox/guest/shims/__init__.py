"""Stand-ins for the platforms' grader modules; this folder itself is on the worker's sys.path."""
