"""A studio Sample in the shape each platform's grader reads.

The builders live in the guest package (``studio_guest.payloads``, stdlib only) so that there is one
implementation: the worker builds payloads from the stored sample JSON it is sent as is, and the
studio builds them here, from the same plain-data form of a ``Sample``, when it holds objects
(validation, a Letta extractor that runs in the studio).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from studio.core.json_types import JsonObject
from studio.core.models import Extractor, Sample

from .guest.studio_guest import payloads as guest

input_text = guest.input_text


def sample_data(sample: Sample) -> JsonObject:
    """The plain-data form of a sample the guest builders read (the fields they use, values as is)."""
    return {
        "id": sample.id,
        "messages": [{"role": t.role, "content": t.content} for t in sample.messages],
        "completion": sample.completion,
        "expected": sample.expected,
        "metadata": sample.metadata,
        "fields": sample.fields,
    }


def adaptive(sample: Sample) -> JsonObject:
    return guest.adaptive(sample_data(sample))


def mka1_sample_dict(sample: Sample) -> JsonObject:
    return guest.mka1_sample_dict(sample_data(sample))


def mka1_item(sample: Sample) -> JsonObject:
    return guest.mka1_item(sample_data(sample))


def mka1_sample(sample: Sample) -> JsonObject:
    return guest.mka1_sample(sample_data(sample))


def mka1_batch_entry(sample: Sample) -> JsonObject:
    return guest.mka1_batch_entry(sample_data(sample))


def _submission(sample: Sample, extractor: Extractor | None) -> str:
    """Letta's extractor picks the submission (default: the last assistant turn)."""
    if extractor is None:
        return sample.completion or ""
    from studio.core.models.extractors import ExtractionError, extract

    try:
        return extract(sample, extractor)
    except ExtractionError:
        return ""


def letta(sample: Sample, extractor: Extractor | None = None) -> JsonObject:
    return guest.letta(sample_data(sample), _submission(sample, extractor))


def promptfoo(sample: Sample) -> JsonObject:
    return guest.promptfoo(sample_data(sample))


BUILDERS: dict[str, Callable[[Sample], JsonObject]] = {
    "adaptive": adaptive,
    "mka1_sample": mka1_sample,
    "mka1_batch": mka1_batch_entry,
    "letta": letta,
    "promptfoo": promptfoo,
}


def build(contract: str, samples: Sequence[Sample], extractor: Extractor | None = None) -> list[JsonObject]:
    if contract == "letta" and extractor is not None:
        return [letta(s, extractor) for s in samples]
    make = guest.BUILDERS[contract]
    return [make(sample_data(s)) for s in samples]


def needs_studio(contract: str, extractor: Extractor | None) -> bool:
    """Whether payloads must be built in the studio (a Letta extractor runs there), not in the worker."""
    return contract == "letta" and extractor is not None
