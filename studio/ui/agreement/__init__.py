"""The agreement view (a run against human labels) and the compare view (run A against run B)."""

from .compare import CompareView
from .view import AgreementView

__all__ = ["AgreementView", "CompareView"]
