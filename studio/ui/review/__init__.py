"""The Review page: blind labelling of a review queue by a team, and a lead's agreement (issue 48)."""

from .page import ReviewPage

__all__ = ["ReviewPage"]
