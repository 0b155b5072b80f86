"""Plain-text lines for the runs of pairwise judges and juries (``run``, ``runs show``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from studio.core.engine.summary import RunAggregates


def _share(value: float | None, ci: list[float] | None) -> str:
    if value is None:
        return "n/a"
    return f"{value:.1%}" + (f" [{ci[0]:.1%}, {ci[1]:.1%}]" if ci else "")


def _number(value: float | None, ci: list[float] | None) -> str:
    if value is None:
        return "n/a"
    return f"{value:.3f}" + (f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else "")


def print_panels(agg: RunAggregates) -> None:
    pairwise = agg.pairwise
    if pairwise:
        ci = agg.pairwise_ci
        print("  pairwise (both orders asked): " + "  ".join(
            f"{key.replace('_', ' ')} {_share(pairwise[key], ci.get(key))}" for key in pairwise))
    jury = agg.jury
    if jury:
        print(f"  jury agreement: Fleiss kappa {_number(jury.get('fleiss_kappa'), jury.get('fleiss_kappa_ci'))}"
              f"  Krippendorff alpha {_number(jury.get('krippendorff_alpha'), jury.get('krippendorff_alpha_ci'))}"
              f"  ties {jury.get('ties', 0)}")
        for name, why in (jury.get("undefined") or {}).items():
            print(f"    {name}: {why}")
        for name, juror in (jury.get("per_juror") or {}).items():
            print(f"    juror {name}: answered {juror['answered']}, failed {juror['failed']}, "
                  f"tokens {juror['prompt_tokens']}+{juror['completion_tokens']}")
