"""The size principle: how many library shapes each attribute and count literal holds of.

Under the abstract generator (spec §3.4) set A is drawn uniformly from the library shapes satisfying
the concept and set B from the shapes violating it (for a pair concept: half from each pool that
violates exactly one attribute). A rule whose pools are small and still hold of every context image
makes the context less of a coincidence: its likelihood is the product of 1/|pool| over the images
(`solver.induction.posterior`). The pools are sets of library shapes, computed here through the same facts the
solver uses (`solver.induction.facts.shape_facts`): for a library shape these are the table's labels (the
generator's pools, spec §3.4), or its measured geometry when the facts are measured (`AttributeSource.GEOMETRY`,
the `MEASURED_` tables).

Computing the facts of the 627 library shapes takes ~20 s, so the pools are shipped as bit masks in
the generated module `solver/induction/library_pools.py`, regenerated with `python -m solver.induction.pools` after the
features change (like `solver.induction.prior`).
"""

from __future__ import annotations

import functools
import sys
from pathlib import Path

from solver.induction.facts import AttributeSource, current_attribute_source
from solver.induction.rules import Comparison, Family, Literal

MODULE = Path(__file__).with_name("library_pools.py")
MAX_COUNT = 64


def _tables(measured: bool | None = None):
    """(shapes, attribute = 1, counts, attribute = 0) bit masks of the facts in use (`measured`: of the measured
    facts; None: as `solver.induction.facts.current_attribute_source` says)."""
    from solver.induction import library_pools as pools

    if measured is None:
        measured = current_attribute_source() is AttributeSource.GEOMETRY
    if measured:
        return pools.SHAPES, pools.MEASURED_ATTRIBUTES, pools.MEASURED_COUNTS, pools.MEASURED_ABSENT
    return pools.SHAPES, pools.ATTRIBUTES, pools.COUNTS, pools.ABSENT


def literal_pool(literal: Literal) -> int | None:
    """Bit mask (bit k = library shape k) of the library shapes the literal holds of, or None when the
    literal is not about attributes or counts (categories and stroke sequences name single shapes)."""
    return _literal_pool(literal, current_attribute_source() is AttributeSource.GEOMETRY)


def failing_pool(literal: Literal) -> int | None:
    """Bit mask of the library shapes that violate the literal the way the abstract generator's negatives
    do (spec §3.4): an attribute literal fails where the attribute applies with the other value (0 for
    `attr(A)`, 1 for its negation; a shape to which the attribute does not apply is in neither pool), a
    count literal wherever it does not hold. None when the literal has no pool."""
    return _failing_pool(literal, current_attribute_source() is AttributeSource.GEOMETRY)


@functools.lru_cache(maxsize=4096)
def _literal_pool(literal: Literal, measured: bool) -> int | None:
    shapes, attributes, counts, _ = _tables(measured)
    everything = (1 << shapes) - 1
    if literal.family is Family.ATTRIBUTE:
        pool = attributes.get(literal.name, 0)
    elif literal.family is Family.COUNT:
        readings = counts.get(literal.name, {})
        if literal.comparison is Comparison.EQ:
            pool = readings.get(literal.value, 0)
        elif literal.comparison is Comparison.GE:
            pool = functools.reduce(int.__or__, (m for n, m in readings.items() if n >= literal.value), 0)
        else:
            pool = functools.reduce(int.__or__, (m for n, m in readings.items() if n <= literal.value), 0)
    else:
        return None
    return everything & ~pool if literal.negated else pool


@functools.lru_cache(maxsize=4096)
def _failing_pool(literal: Literal, measured: bool) -> int | None:
    pool = _literal_pool(literal, measured)
    if pool is None:
        return None
    shapes, attributes, _, absent = _tables(measured)
    if literal.family is Family.ATTRIBUTE:
        return attributes.get(literal.name, 0) if literal.negated else absent.get(literal.name, 0)
    return ((1 << shapes) - 1) & ~pool


def library_size() -> int:
    return _tables()[0]


def pool_tables(facts) -> tuple[dict[str, int], dict[str, int], dict[str, dict[int, int]]]:
    """Bit masks from the facts of the library shapes (in library order): attribute = 1; attribute = 0;
    count reading."""
    attributes: dict[str, int] = {}
    absent: dict[str, int] = {}
    counts: dict[str, dict[int, int]] = {}
    for k, shape in enumerate(facts):
        for name, value in shape.attributes.items():
            if value == 1:
                attributes[name] = attributes.get(name, 0) | 1 << k
            elif value == 0:
                absent[name] = absent.get(name, 0) | 1 << k
        for name, values in shape.counts.items():
            for n in values:
                counts.setdefault(name, {})[n] = counts.setdefault(name, {}).get(n, 0) | 1 << k
    return attributes, absent, counts


def _table_lines(prefix: str, facts) -> list[str]:
    attributes, absent, counts = pool_tables(facts)
    return [
        f"{prefix}ATTRIBUTES = {{",
        *(f"    {name!r}: {hex(mask)}," for name, mask in sorted(attributes.items())),
        "}",
        f"{prefix}ABSENT = {{",
        *(f"    {name!r}: {hex(mask)}," for name, mask in sorted(absent.items())),
        "}",
        f"{prefix}COUNTS = {{",
        *(f"    {name!r}: {{{', '.join(f'{n}: {hex(m)}' for n, m in sorted(values.items()))}}},"
          for name, values in sorted(counts.items())),
        "}",
    ]


def write_pools(path: Path = MODULE) -> Path:
    from dsl.library import load_library
    from solver.induction.facts import shape_facts

    library = load_library()
    labelled = [shape_facts(entry.shape, source=AttributeSource.TABLE) for entry in library.values()]
    measured = [shape_facts(entry.shape, source=AttributeSource.GEOMETRY) for entry in library.values()]
    lines = [
        '"""Library pools (generated by `python -m solver.induction.pools`; do not edit): bit k = the k-th library',
        'shape (`dsl.library.load_library()` order) holds the attribute (value 1) / lacks it (value 0; a shape',
        'in neither table: not applicable) / has the count reading; by the facts of the shape as the table labels it,',
        'and (MEASURED_) as its geometry measures it."""',
        "",
        f"SHAPES = {len(labelled)}",
        *_table_lines("", labelled),
        *_table_lines("MEASURED_", measured),
        "",
    ]
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


if __name__ == "__main__":
    print(f"written {write_pools(Path(sys.argv[1]) if len(sys.argv) > 1 else MODULE)}")
