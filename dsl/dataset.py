"""The released dataset layout (spec §4): reading with validation, and writing.

    <root>/ShapeBongard_V2_split.json              {split name: [problem names]}
    <root>/<type>/<type>_action_programs.json      {problem: [positives, negatives]}, 7 images each
    <root>/<type>/images/<problem>/1/{0..6}.png    positives (set A)
    <root>/<type>/images/<problem>/0/{0..6}.png    negatives (set B)

<type> is the first two characters of the problem name (`ff`, `bd`, `hd`). Images 0-5 of each side are
the context, image 6 of each side a query. Every fault in a file raises `DatasetError` naming the file.
Writers replace files atomically (temporary file, then rename), so an interrupted run never leaves a
half-written JSON or problem folder.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image

from dsl.limits import LimitError, MAX_IMAGE_PIXELS, check_pixels, loads_limited
from dsl.owned import write_atomically
from dsl.syntax import ActionStringError, format_image, parse_image
from dsl.types import ImageProgram

Image.MAX_IMAGE_PIXELS = MAX_IMAGE_PIXELS  # Pillow's decompression-bomb guard, at the tool's own limit

SPLIT_FILE = "ShapeBongard_V2_split.json"
_PROBLEM_NAME = re.compile(r"[a-z]{2}_[^/\\]+")  # the type, then no path separators
IMAGES_PER_SIDE = 7
MAX_NAME_BYTES = 200  # a problem's name is a folder's name (at most 255 bytes on most file systems)
CONTEXT_PER_SIDE = 6
LABELS = {1: "positives", 0: "negatives"}  # label folder name -> side


class DatasetError(ValueError):
    """A missing or malformed file of a dataset; the message names the file and the fault."""


@dataclass(frozen=True, slots=True)
class ProblemPrograms:
    """The action programs of one problem, as read from `source`."""

    name: str
    positives: tuple[ImageProgram, ...]
    negatives: tuple[ImageProgram, ...]
    source: Path | None = None


@dataclass(frozen=True, slots=True)
class ProblemImage:
    """One image of a problem: `label` 1 (set A) or 0 (set B), `index` 0-6; pixels load on demand."""

    path: Path
    label: int
    index: int
    program: ImageProgram | None = None

    def load(self) -> np.ndarray:
        """The image as a uint8 greyscale array (255 = white background)."""
        return read_image(self.path)


@dataclass(frozen=True, slots=True)
class Problem:
    """A Bongard problem: 7 positive images (label 1) and 7 negative images (label 0)."""

    name: str
    kind: str
    positives: tuple[ProblemImage, ...]
    negatives: tuple[ProblemImage, ...]

    @property
    def context_a(self) -> tuple[ProblemImage, ...]:
        return self.positives[:CONTEXT_PER_SIDE]

    @property
    def context_b(self) -> tuple[ProblemImage, ...]:
        return self.negatives[:CONTEXT_PER_SIDE]

    @property
    def queries(self) -> tuple[ProblemImage, ProblemImage]:
        """The positive query (belongs to A), then the negative query."""
        return self.positives[CONTEXT_PER_SIDE], self.negatives[CONTEXT_PER_SIDE]

    @property
    def in_solving_order(self) -> tuple[ProblemImage, ...]:
        """The 6 context images of A, the 6 of B, then the two queries."""
        return self.context_a + self.context_b + self.queries

    @property
    def has_programs(self) -> bool:
        return all(i.program is not None for i in self.positives + self.negatives)


def problem_kind(name: str) -> str:
    """The type folder of a problem: the first two characters of its name (spec §3.1)."""
    return name[:2]


def problem_folder(root: Path | str, name: str) -> Path:
    return Path(root) / problem_kind(name) / "images" / name


def programs_file(root: Path | str, kind: str) -> Path:
    return Path(root) / kind / f"{kind}_action_programs.json"


# --------------------------------------------------------------------------------------------------
# Reading


def read_image(path: Path) -> np.ndarray:
    """An image file as a uint8 greyscale array (255 = white background); its size is checked against
    `dsl.limits.MAX_IMAGE_PIXELS` before its pixels are decoded."""
    try:
        with warnings.catch_warnings():  # Pillow's warnings (a bomb, a palette's transparency) said in one line, or moot
            warnings.simplefilter("ignore")
            with Image.open(path) as image:  # (Pillow warns as it opens the file)
                check_pixels(*image.size)
                image.load()
                return np.asarray(image.convert("L"), dtype=np.uint8)
    except FileNotFoundError:
        raise DatasetError(f"{path}: image file is missing") from None
    except IsADirectoryError:
        raise DatasetError(f"{path}: is a folder, not an image file") from None
    except LimitError as error:
        raise DatasetError(f"{path}: {error}") from None
    except Image.DecompressionBombError:
        raise DatasetError(f"{path}: image over the limit of {MAX_IMAGE_PIXELS} pixels "
                           "(the dataset's images are 512 x 512)") from None
    except (OSError, ValueError, SyntaxError, EOFError) as error:
        raise DatasetError(f"{path}: unreadable or corrupt PNG ({error})") from None
    except MemoryError:
        raise DatasetError(f"{path}: image too large to decode") from None


def read_json(path: Path) -> object:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise DatasetError(f"{path}: file is missing") from None
    except IsADirectoryError:
        raise DatasetError(f"{path}: is a folder, not a JSON file") from None
    except UnicodeDecodeError as error:
        raise DatasetError(f"{path}: not UTF-8 text (byte {error.start}: {error.reason})") from None
    except OSError as error:
        raise DatasetError(f"{path}: cannot read ({error.strerror or error})") from None
    try:
        return loads_limited(text)
    except json.JSONDecodeError as error:
        raise DatasetError(f"{path}: bad JSON ({error})") from None
    except LimitError as error:
        raise DatasetError(f"{path}: {error}") from None


def _parse_side(path: Path, name: str, side: str, images: object) -> tuple[ImageProgram, ...]:
    if not isinstance(images, list) or len(images) != IMAGES_PER_SIDE:
        count = len(images) if isinstance(images, list) else type(images).__name__
        raise DatasetError(f"{path}: problem {_shown(name)}: {side} must be a list of {IMAGES_PER_SIDE} images, "
                           f"got {count}")
    programs = []
    for index, image in enumerate(images):
        try:
            programs.append(parse_image(image))
        except (ActionStringError, ValueError) as error:
            raise DatasetError(f"{path}: problem {_shown(name)}, {side} image {index}: {error}") from None
    return tuple(programs)


def parse_programs(path: Path, data: object) -> dict[str, ProblemPrograms]:
    """Check and parse the content of one action-program JSON read from `path`."""
    if not isinstance(data, dict):
        raise DatasetError(f"{path}: expected an object problem -> [positives, negatives], got {type(data).__name__}")
    table = {}
    for name, sides in data.items():
        if not isinstance(sides, list) or len(sides) != 2:
            raise DatasetError(f"{path}: problem {_shown(name)}: expected [positives, negatives]")
        positives = _parse_side(path, name, "positives", sides[0])
        negatives = _parse_side(path, name, "negatives", sides[1])
        table[name] = ProblemPrograms(name, positives, negatives, path)
    return table


def _program_files(root_or_file: Path) -> list[Path]:
    if root_or_file.is_file() or root_or_file.suffix == ".json":
        return [root_or_file]
    own = programs_file(root_or_file.parent, root_or_file.name)
    if own.exists():
        return [own]
    files = sorted(root_or_file.glob("*/*_action_programs.json"))
    if not root_or_file.is_dir() or not files:
        raise DatasetError(f"{root_or_file}: no <type>/<type>_action_programs.json found")
    return files


def read_programs(root_or_file: Path | str) -> dict[str, ProblemPrograms]:
    """The action programs of a dataset root (every type merged), of one type folder, or of one JSON file."""
    table: dict[str, ProblemPrograms] = {}
    for path in _program_files(Path(root_or_file)):
        table.update(parse_programs(path, read_json(path)))
    return table


def _side_images(folder: Path, label: int, programs: tuple[ImageProgram, ...] | None) -> tuple[ProblemImage, ...]:
    side = folder / str(label)
    if not side.is_dir():
        raise DatasetError(f"{side}: label folder {label} ({LABELS[label]}) is missing")
    pngs = sorted(p.name for p in side.iterdir() if p.suffix.lower() == ".png")
    expected = [f"{i}.png" for i in range(IMAGES_PER_SIDE)]
    if pngs != expected:
        raise DatasetError(f"{side}: expected exactly the images {', '.join(expected)}, found {pngs or 'none'}")
    paths = [side / name for name in expected]
    for path in paths:
        if not path.is_file():
            raise DatasetError(f"{path}: not an image file")
        if path.stat().st_size == 0:
            raise DatasetError(f"{path}: empty PNG file")
    return tuple(
        ProblemImage(path, label, i, programs[i] if programs else None) for i, path in enumerate(paths)
    )


def _programs_for(folder: Path, programs: Mapping[str, ProblemPrograms] | ProblemPrograms | None):
    if programs is None or isinstance(programs, ProblemPrograms):
        return programs
    if folder.name not in programs:
        sources = {str(p.source) for p in programs.values() if p.source is not None}
        where = ", ".join(sorted(sources)) or "the programs given"
        raise DatasetError(f"{folder}: no action program for problem {folder.name} in {where}")
    return programs[folder.name]


def load_problem(
    folder: Path | str, programs: Mapping[str, ProblemPrograms] | ProblemPrograms | None = None
) -> Problem:
    """A problem folder `<...>/<problem>/{1,0}/{0..6}.png`; with `programs` (a table from `read_programs`,
    or this problem's entry) each image carries its program. Images are only checked to exist here;
    `ProblemImage.load` reads and validates the PNG."""
    folder = Path(folder)
    if not folder.is_dir():
        raise DatasetError(f"{folder}: problem folder is missing")
    entry = _programs_for(folder, programs)
    return Problem(
        name=folder.name,
        kind=problem_kind(folder.name),
        positives=_side_images(folder, 1, entry.positives if entry else None),
        negatives=_side_images(folder, 0, entry.negatives if entry else None),
    )


def read_splits(root: Path | str, filename: str = SPLIT_FILE) -> dict[str, list[str]]:
    path = Path(root) / filename
    data = read_json(path)
    if not isinstance(data, dict) or not all(
        isinstance(v, list) and all(isinstance(n, str) for n in v) for v in data.values()
    ):
        raise DatasetError(f"{path}: expected an object split name -> list of problem names")
    for split, names in data.items():
        bad = next((n for n in names if not _is_problem_name(n)), None)
        if bad is not None:
            raise DatasetError(f"{path}: split {split!r} lists {bad[:80]!r}, not a problem name (<type>_<concept>_<index>)")
    return data


def _is_problem_name(name: str) -> bool:
    """<type>_<rest>: printable, no path separator, short enough to be a folder's name (MAX_NAME_BYTES)."""
    return (_PROBLEM_NAME.fullmatch(name) is not None and name.isprintable()
            and len(name.encode("utf-8", "surrogatepass")) <= MAX_NAME_BYTES)


def _shown(name: object, limit: int = 80) -> str:
    """A problem's name in a message, cut to `limit` characters (written as a Python string if it holds line breaks
    or other characters that do not print)."""
    text = str(name) if str(name).isprintable() else repr(str(name))
    return text if len(text) <= limit else text[: limit - 3] + "..."


def load_split(root: Path | str, split: str, programs: bool = True, filename: str = SPLIT_FILE) -> list[Problem]:
    """Every problem of `split` in the split file of `root`, with programs from the types' JSON files."""
    root = Path(root)
    splits = read_splits(root, filename)
    if split not in splits:
        raise DatasetError(f"{root / filename}: no split {split!r} (available: {', '.join(sorted(splits))})")
    names = splits[split]
    table: dict[str, ProblemPrograms] = {}
    if programs:
        for kind in sorted({problem_kind(n) for n in names}):
            path = programs_file(root, kind)
            table.update(parse_programs(path, read_json(path)))
    problems = []
    for name in names:
        folder = problem_folder(root, name)
        if not folder.is_dir():
            raise DatasetError(f"{root / filename}: split {split!r} lists problem {name}, but {folder} is missing")
        problems.append(load_problem(folder, table if programs else None))
    return problems


def list_problems(root: Path | str) -> list[str]:
    """Names of the problem folders present under `<root>/<type>/images/`, sorted."""
    return sorted(p.name for p in Path(root).glob("*/images/*") if p.is_dir() and not p.name.startswith("."))


# --------------------------------------------------------------------------------------------------
# Writing


def atomic_write_text(path: Path, text: str) -> None:
    """Write `text` to a temporary file beside `path`, then rename it over `path` (`dsl.owned.write_atomically`:
    a failure leaves no temporary file and raises a WriteError naming `path`)."""
    write_atomically(path, text)


def programs_json(positives: list[ImageProgram], negatives: list[ImageProgram]) -> list:
    """One problem's entry of an action-program JSON: [positives, negatives] of action strings."""
    return [[format_image(p) for p in positives], [format_image(p) for p in negatives]]


def write_programs(path: Path | str, table: Mapping[str, list]) -> None:
    """Write an action-program JSON (problem -> [positives, negatives] of action strings), sorted by name."""
    atomic_write_text(Path(path), json.dumps({n: table[n] for n in sorted(table)}))


def write_splits(root: Path | str, splits: Mapping[str, list[str]], filename: str = SPLIT_FILE) -> None:
    atomic_write_text(Path(root) / filename, json.dumps({k: list(v) for k, v in splits.items()}, indent=1))


def _save_png(image: np.ndarray, path: Path) -> None:
    array = np.asarray(image)
    if array.dtype != np.uint8 or array.ndim not in (2, 3):
        raise ValueError(f"{path}: expected a uint8 greyscale or RGB array, got {array.dtype} {array.shape}")
    Image.fromarray(array).save(path, format="PNG")


def write_problem(
    root: Path | str, name: str, positives: list[np.ndarray], negatives: list[np.ndarray]
) -> Path:
    """Write the 7 + 7 images of a problem to `<root>/<type>/images/<name>/{1,0}/{0..6}.png`. The folder
    appears complete or not at all (written under a temporary name, then renamed)."""
    if len(positives) != IMAGES_PER_SIDE or len(negatives) != IMAGES_PER_SIDE:
        raise ValueError(f"{name}: need {IMAGES_PER_SIDE} positive and negative images")
    folder = problem_folder(root, name)
    temporary = folder.with_name(f".{name}.{os.getpid()}.tmp")
    shutil.rmtree(temporary, ignore_errors=True)
    for label, images in ((1, positives), (0, negatives)):
        (temporary / str(label)).mkdir(parents=True)
        for index, image in enumerate(images):
            _save_png(image, temporary / str(label) / f"{index}.png")
    shutil.rmtree(folder, ignore_errors=True)
    os.replace(temporary, folder)
    return folder
