"""`bongard-solver train-decoder` and `bongard-solver decode`."""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def run_train(args: argparse.Namespace) -> int:
    from perception.train import train

    metrics = train(args)
    print(json.dumps(metrics))
    return 0


def run_decode(args: argparse.Namespace) -> int:
    import numpy as np
    from PIL import Image

    from dsl.syntax import format_image
    from perception.decode import decode_images, load_decoder

    model = load_decoder(args.checkpoint)
    paths = [Path(p) for p in args.images]
    images = []
    for path in paths:
        try:
            images.append(np.asarray(Image.open(path).convert("L")))
        except OSError as error:
            raise SystemExit(f"bongard-solver decode: cannot read image {path}: {error}") from None
    results = decode_images(model, images, top_k=args.top_k, beam_width=args.beam, sample=args.sample, seed=args.seed)
    out = []
    for path, proposals in zip(paths, results):
        print(path)
        for p in proposals:
            print(f"  {p.logp:9.3f}  {json.dumps(format_image(p.program))}")
        out.append({"image": str(path), "proposals": [{"logp": p.logp, "program": format_image(p.program)} for p in proposals]})
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1))
    return 0


def register(subcommands: argparse._SubParsersAction) -> None:
    from perception.train import add_arguments

    train = subcommands.add_parser("train-decoder", help="train the image -> program decoder on generated images")
    add_arguments(train)
    train.set_defaults(func=run_train)

    decode = subcommands.add_parser("decode", help="propose the top-k programs that could have drawn each image")
    decode.add_argument("images", nargs="+", help="PNG files")
    decode.add_argument("--top-k", type=int, default=10, help="proposals per image")
    decode.add_argument("--beam", type=int, default=None, help="beam width (default: max(top-k, 8))")
    decode.add_argument("--sample", type=int, default=0, help="also draw this many samples per image and merge them")
    decode.add_argument("--seed", type=int, default=0, help="seed for --sample")
    decode.add_argument("--checkpoint", type=Path, default=None, help="decoder checkpoint (default: the shipped one)")
    decode.add_argument("--json", type=Path, default=None, help="write the proposals as JSON")
    decode.set_defaults(func=run_decode)
