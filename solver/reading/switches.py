"""Which parts of the solver run: one switch per part, every one on by default (the product's path), each turned off
by an ablation (`bongard-solver bench ablations`) to measure what that part buys.

    perception = PixelPerception(switches=Switches(tracer=False))       # the perception switches
    solved = solve_folder(folder, perception)                            # the solving switches: `perception.switches`

The perception switches travel to the worker processes in their jobs (`solver.reading.workers.refine_one`, the check
jobs `solver.reading.verdicts.checked_many`); the solving switches are read by `solver.solving.folder.solve_images`
from the perception it is given, so that one object says which solver ran.
"""

from __future__ import annotations

from dataclasses import dataclass, fields


@dataclass(frozen=True, slots=True)
class Switches:
    hypotheses: bool = True  # the problem perceived as a whole (`solver.reading.pipeline`): H formed from set A and
    # checked on the other images; off: every image read in full and the readings reconciled with set A
    near_misses: bool = True  # the check of an image against H tries H's one-action neighbours and H written
    # otherwise (`solver.reading.verdicts.checked_many`); off: H's own fit alone (its strokes still judged along H),
    # an image H does not explain read in full
    tracer: bool = True  # free-form readings checked and mended by the tracer, off-grid ones traced
    # (`solver.reading.traced`); off: the decoder's reading on the free-form grid kept as decoded
    search: bool = True  # readings refined by render-and-compare; off: the decoder's top-1 reading of every image
    # (no classifier, no tracer, no problem-level hypotheses, no reconciling)
    posterior: bool = True  # an attribute or count rule weighed by its posterior under the generators
    # (`solver.induction.weighing.size_principle`); off: clingo's optimal rules alone (fewest errors, then shortest)
    confidence: bool = True  # each label's confidence calibrated from perception's evidence
    # (`solver.solving.confidence`); off: the optimal rules' vote share
    attributes: str | None = None  # where a shape's attribute values come from (`solver.induction.AttributeSource`:
    # "geometry", "table" or "both"); None: the product's, `solver.settings.ATTRIBUTE_SOURCE`

    def off(self) -> tuple[str, ...]:
        """The switches turned off, and those set otherwise than the product (`attributes=geometry`)."""
        found = []
        for f in fields(self):
            value = getattr(self, f.name)
            if value is False:
                found.append(f.name)
            elif value is not None and not isinstance(value, bool):
                found.append(f"{f.name}={value}")
        return tuple(found)


PRODUCT = Switches()
