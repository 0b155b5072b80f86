"""The Suites section: several graders run together (see page.py)."""
