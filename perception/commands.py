"""`bongard-solver train-decoder`, `bongard-solver train-shapes` and `bongard-solver decode`."""

from __future__ import annotations

import argparse
import json
import warnings
from pathlib import Path

from dsl.options import count, fraction, non_negative, positive_number, seed
from dsl.owned import PNG_TEXT, WRITER, OutputError, check_output_file, check_output_folder, marked_json
from perception.config import DecoderConfig
from perception.device import DEVICES


MAX_TOP_K = 100  # proposals per image (the solver uses 6)
MAX_BEAM = 128  # beam width (the solver uses 6)
MAX_SAMPLES = 1000


def _check_checkpoint_target(path: Path, option: str = "--out") -> None:
    """A checkpoint to write: absent, or a checkpoint of ours (a torch file with a config) whose training
    log, if any, is ours too (JSON lines of steps); another file there is someone else's."""
    check_output_folder(path.parent, option)
    if path.is_dir():
        raise OutputError(f"{option} {path}: is a folder; give a file name")
    if path.exists():
        import torch

        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                state = torch.load(path, map_location="cpu", weights_only=True)
        except Exception:  # noqa: BLE001 - whatever it is, it is not our checkpoint
            state = None
        if not isinstance(state, dict) or "config" not in state:
            raise OutputError(f"{option} {path}: the file exists and is not a checkpoint of {WRITER}; "
                              "refusing to replace it (move it away or choose another path)")
    log = path.with_suffix(".log.jsonl")
    if log.exists():
        first = log.read_text(encoding="utf-8", errors="replace").split("\n", 1)[0]
        try:
            ours = isinstance(json.loads(first), dict) and "step" in json.loads(first)
        except json.JSONDecodeError:
            ours = False
        if not ours:
            raise OutputError(f"{option} {log}: the training log exists and was not written by {WRITER}; "
                              "refusing to append to it")


def run_train(args: argparse.Namespace) -> int:
    from perception.train import train

    _check_checkpoint_target(args.out)

    metrics = train(args)
    if metrics:  # (under torchrun, rank 0's)
        print(json.dumps(metrics))
    return 0


def run_decode(args: argparse.Namespace) -> int:
    from dsl.dataset import read_image
    from dsl.syntax import format_image
    from perception.decode import decode_images, load_decoder
    from perception.device import resolve_device

    for option, path in (("--json", args.json), ("--picture", args.picture)):
        if path is not None:
            check_output_file(path, option)
    paths = [Path(p) for p in args.images]
    images = [read_image(path) for path in paths]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torch's warnings about a foreign pickle: the error says it
            model = load_decoder(args.checkpoint, resolve_device(args.device))
    except Exception as error:  # a missing, damaged or foreign checkpoint: the file's fault
        reason = " ".join(str(error).split())[:160]
        raise SystemExit(f"bongard-solver decode: --checkpoint {args.checkpoint}: not a decoder checkpoint ({reason})") from None
    results = decode_images(model, images, top_k=args.top_k, beam_width=args.beam, sample=args.sample, seed=args.seed)
    out = []
    for path, proposals in zip(paths, results):
        print(path)
        for p in proposals:
            print(f"  {p.logp:9.3f}  {json.dumps(format_image(p.program))}")
        out.append({"image": str(path), "proposals": [{"logp": p.logp, "program": format_image(p.program)} for p in proposals]})
    if args.json:
        Path(args.json).write_text(marked_json({"images": out}))
    if args.picture:
        draw_proposals(images, results, args.picture)
    return 0


def draw_proposals(images, results, path: Path, panel: int = 160, shown: int = 4) -> None:
    """One row per image: the input's ink crop, then its top proposals drawn centred with their logp
    (the decoder gives no pose; `search.refine` fits one)."""
    import numpy as np
    from PIL import Image, ImageDraw, PngImagePlugin

    from dsl.raster import fit_view, render_drawing
    from dsl.turtle import execute_image
    from dsl.types import Pose
    from perception.data import prepare_image

    sheet = Image.new("L", (panel * (shown + 1), panel * len(images)), 255)
    pen = ImageDraw.Draw(sheet)
    for row, (image, proposals) in enumerate(zip(images, results)):
        crop, _ = prepare_image(image, panel)  # what the decoder sees
        sheet.paste(Image.fromarray((255 - 255 * crop).astype(np.uint8)), (0, row * panel))
        for col, proposal in enumerate(proposals[:shown], start=1):
            poses = [Pose(0.0, 300.0 * i, 0.0, 120.0) for i in range(len(proposal.program.shapes))]
            drawing = execute_image(proposal.program, poses)
            sheet.paste(Image.fromarray(render_drawing(drawing, panel, fit_view(drawing, panel))), (col * panel, row * panel))
            pen.text((col * panel + 4, row * panel + 2), f"{proposal.logp:.2f}", fill=0)
        pen.line([(0, row * panel), (sheet.width, row * panel)], fill=128)
    info = PngImagePlugin.PngInfo()
    for key, value in PNG_TEXT.items():
        info.add_text(key, value)
    sheet.save(path, format="PNG", pnginfo=info)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", type=Path, required=True, help="checkpoint file to write")
    parser.add_argument("--steps", type=count(1), default=3000, help="optimiser steps (the LR schedule spans them)")
    parser.add_argument("--batch-size", type=count(1, 4096), default=32, help="images per step")
    parser.add_argument("--lr", type=positive_number, default=2e-3, help="peak AdamW learning rate (cosine decay)")
    parser.add_argument("--warmup", type=count(0), default=150, help="linear warm-up steps")
    parser.add_argument("--weight-decay", type=fraction, default=1e-4)
    parser.add_argument("--seed", type=seed, default=0)
    parser.add_argument("--feature", type=count(1, 4096), default=DecoderConfig.feature, help="features per view")
    parser.add_argument("--hidden", type=count(1, 4096), default=DecoderConfig.hidden)
    parser.add_argument("--channels", type=str, default=",".join(map(str, DecoderConfig.channels)))
    parser.add_argument("--val-every", type=count(1), default=250, help="steps between validations / checkpoints")
    parser.add_argument("--val-size", type=count(1, 1_000_000), default=256, help="held-out generated images")
    parser.add_argument("--workers", type=count(0, 64), default=1, help="DataLoader worker processes (0 = in the loop)")
    parser.add_argument("--threads", type=count(1, 64), default=2, help="torch threads")
    parser.add_argument("--time-limit", type=non_negative, default=0.0, help="stop after this many minutes (0 = none)")
    parser.add_argument("--init", type=Path, default=None, help="start from this checkpoint's weights (new parts from scratch)")
    parser.add_argument("--stop-after", type=count(0), default=0, help="stop after this many steps (the LR schedule still spans --steps)")
    parser.add_argument("--device", default="auto", choices=DEVICES, help="where to train (auto: CUDA if present); "
                        "under torchrun one process per GPU, or gloo processes on the CPU")


def add_shape_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", type=Path, default=None, help="checkpoint to write after every epoch (default: the shipped one)")
    parser.add_argument("--images", type=count(1, 10_000_000), default=120_000, help="rendered training images (made once)")
    parser.add_argument("--epochs", type=count(1, 10_000), default=6)
    parser.add_argument("--batch", type=count(1, 4096), default=128)
    parser.add_argument("--lr", type=positive_number, default=2e-3, help="peak AdamW learning rate (one-cycle)")
    parser.add_argument("--seed", type=seed, default=1)
    parser.add_argument("--threads", type=count(1, 64), default=2, help="torch threads")
    parser.add_argument("--workers", type=count(1, 64), default=2, help="processes rendering the images")
    parser.add_argument("--cache", type=Path, default=None, help="an .npz to keep the rendered images in (made if missing)")


def run_train_shapes(args: argparse.Namespace) -> int:
    from perception.shapes import DEFAULT_CHECKPOINT, train

    args.out = args.out or DEFAULT_CHECKPOINT
    print(json.dumps(train(args)))
    return 0


def register(subcommands: argparse._SubParsersAction) -> None:
    train = subcommands.add_parser("train-decoder", help="train the image -> program decoder on generated images")
    add_arguments(train)
    train.set_defaults(func=run_train)

    shapes = subcommands.add_parser("train-shapes", help="train the library-shape classifier on generated images")
    add_shape_arguments(shapes)
    shapes.set_defaults(func=run_train_shapes)

    decode = subcommands.add_parser("decode", help="propose the top-k programs that could have drawn each image")
    decode.add_argument("images", nargs="+", help="PNG files")
    decode.add_argument("--top-k", type=count(1, MAX_TOP_K), default=10, help=f"proposals per image (1 to {MAX_TOP_K})")
    decode.add_argument("--beam", type=count(1, MAX_BEAM), default=None, help=f"beam width (default: max(top-k, 8); at most {MAX_BEAM})")
    decode.add_argument("--sample", type=count(0, MAX_SAMPLES), default=0, help="also draw this many samples per image and merge them")
    decode.add_argument("--seed", type=seed, default=0, help="seed for --sample")
    decode.add_argument("--checkpoint", type=Path, default=None, help="decoder checkpoint (default: the shipped one)")
    decode.add_argument("--json", type=Path, default=None, help="write the proposals as JSON")
    decode.add_argument("--picture", type=Path, default=None, help="draw each image and its top proposals (PNG)")
    decode.add_argument("--device", default="auto", choices=DEVICES, help="the decoder's device (auto: CUDA if present)")
    decode.set_defaults(func=run_decode)
