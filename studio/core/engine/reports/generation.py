"""Where a run's outputs came from, in its reports: ``run ... --generate-with ENDPOINT``.

The outputs under test were generated first (engine/generate.py); the run's markdown summary gains a
section saying from which endpoint and model, and what making them cost beside what judging them
cost, and each test suite of its JUnit report the same as properties. Written with the reports as
the run concludes (engine/request.py ``conclude``), never by reading a written report back.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from fractions import Fraction

from studio.core.models.spend import exact_decimal, format_usd

from . import Generated
from .markdown import cell


def markdown_section(generated: Generated, judging: Fraction | None) -> str:
    """The markdown summary's section on the generated outputs and both costs."""
    return (f"\n## Outputs generated\n\n"
            f"Dataset {cell(generated.dataset)}: {generated.stored} answers from endpoint {cell(generated.endpoint)} "
            f"(model {cell(generated.model)}) to the inputs of {cell(generated.source_dataset)}.\n\n"
            f"| cost | calls | tokens | USD |\n|---|---:|---:|---:|\n"
            f"| generation | {generated.calls} | {generated.tokens:,} | {format_usd(generated.price())} |\n"
            f"| judging | | | {format_usd(judging)} |\n")


def junit_properties(xml: str, generated: Generated, judging: Fraction | None) -> str:
    """The JUnit report ``xml`` with each test suite's properties naming the model whose outputs it
    graded and what generating them cost, apart from the judging's cost."""
    root = ET.fromstring(xml)
    values = (("generated_by_endpoint", generated.endpoint), ("generated_by_model", generated.model),
              ("generated_from", generated.source_dataset), ("generation_calls", generated.calls),
              ("generation_tokens", generated.tokens), ("generation_cost_usd", generated.cost or ""),
              ("judging_cost_usd", "" if judging is None else exact_decimal(judging)))
    for props in root.iter("properties"):
        for name, value in values:
            ET.SubElement(props, "property", name=name, value=str(value))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
