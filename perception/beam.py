"""Decoding: beam search (or ancestral sampling) in which every hypothesis walks its own turtle.

A hypothesis is a partial program, its LSTM state, its turtle state and its drawn-so-far canvas. Per step
the decoder looks at the image from the hypothesis's turtle (`_look`: `Decoder.views`, the LSTM), re-centres
the turtle (the correction head's mean times `gain`, by default the config's `correction_gain`), and
offers discrete continuations: NEXT with the heaviest start components (position x direction, best unit), STOP, and LINE / ARC with the heaviest turn and value
components (close components merged, `perception.model.mixture_options`); the best of these by score get a stroke strip
each and their top stroke types. The score of an option is its log-probability (continuous values: the
log-weight of the component they came from). A hypothesis that chooses an action walks its turtle along
it (`dsl.walk.walk`) and draws it on its canvas, exactly as the training data was drawn.
"""

from __future__ import annotations

import hashlib
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

import numpy as np
import torch
import torch.nn.functional as F
from PIL import Image

from dsl.canonical import Segment
from perception.data import (CANVAS, _as_official, apply_correction, crop_box, null_state, prepare_image, state_from_start,
                             token_segment)
from dsl.walk import State, segment_middle, walk
from perception.glimpse import draw_paths, pen_width
from perception.model import ARC, CURVE, LINE, NEXT, STOP, TURN, Decoder
from perception.settings import MIN_NEXT_LOGP



@dataclass
class Hypothesis:
    image: int
    state: State
    canvas: Image.Image
    tokens: list = field(default_factory=list)  # (kind, stroke, values (4,), start (4,))
    logp: float = 0.0
    shapes: int = 0
    actions: int = 0


def prepare(images: list[np.ndarray]) -> dict[str, torch.Tensor]:
    """uint8 greyscale images (any size; 512 px framing assumed) -> the decoder's inputs. An image passed
    more than once (the same array) is prepared once."""
    inputs, rows = prepare_distinct(images)
    if len(rows) == len(inputs["box"]):
        return inputs
    return {key: value[rows] for key, value in inputs.items()}


def prepare_distinct(images: list[np.ndarray]) -> tuple[dict[str, torch.Tensor], torch.Tensor]:
    """`prepare`'s inputs of each distinct image (the same array passed again is one), and the row of each of
    `images` in them: views index the inputs by row (`owner`), so an image judged at many poses is not copied
    for each (a 512 x 512 float image is 1 MB). Within `work_remembered`, an image (its pixels) is prepared once."""
    first: dict[int, int] = {}
    index = [first.setdefault(id(im), len(first)) for im in images]
    memo = _REMEMBERED.get()
    prepared = [_prepared(im) if memo is None else _remembered(memo, ("prepared", pixels_key(im, memo)), _prepared, im)
                for im in {id(im): im for im in images}.values()]
    image, crop, box = zip(*prepared)
    return {"image": torch.stack(image), "crop": torch.from_numpy(np.stack(crop)),
            "box": torch.tensor(box, dtype=torch.float32)}, torch.tensor(index)


def _prepared(im: np.ndarray) -> tuple[torch.Tensor, np.ndarray, tuple]:
    """One image's inputs: its ink in [0, 1] (1, 512, 512), its ink crop (1, 128, 128) and the crop's box."""
    grey = _as_official(np.asarray(im))
    return torch.from_numpy(255 - grey)[None].float() / 255.0, prepare_image(grey, CANVAS)[0][None], crop_box(grey)


_REMEMBERED: ContextVar[dict | None] = ContextVar("decoder_work_remembered", default=None)


@contextmanager
def work_remembered():
    """Within the block the decoder's work on an image is done once: its inputs prepared once (`prepare_distinct`:
    2-3 ms an image, asked for in every batch that holds it), and its readings along a tracing walked once
    (`perception.decode.read_strokes`: the checks of one problem ask for the same walk again and again, a shape's
    poses judged again with the next shape's, H's check of an image repeated by the next check; on the free-form
    problems of generated seed 103333 about half of the walks of the slowest problems were repeats). The same pixels
    again take the first work's outputs. A block inside another keeps the outer block's work. A walk's outputs depend
    a little on the other rows of its batch (about 1e-6 nats), so a remembered walk can differ from a fresh one by
    that: a block is meant to hold one piece of work (`solver.reading.workers.remembering`), whose outputs are then
    the same in any process, whatever ran there before."""
    if _REMEMBERED.get() is not None:
        yield
        return
    token = _REMEMBERED.set({})
    try:
        yield
    finally:
        _REMEMBERED.reset(token)


def remembered_work() -> dict | None:
    """The work `work_remembered` keeps (key -> output), or None outside the block."""
    return _REMEMBERED.get()


def pixels_key(image: np.ndarray, memo: dict | None = None) -> bytes:
    """A key for an image's pixels: a digest of its bytes, shape and type. With `memo` (`remembered_work()`), an
    array's key is computed once in the block (the array kept there with it: its id is not reused meanwhile), not
    again by every call that holds it (each walk's rows and each preparation asked for it: 0.3 ms an image)."""
    if memo is not None:
        return _remembered(memo, ("pixels", id(image)), lambda: (image, pixels_key(image)))[1]
    array = np.ascontiguousarray(image)
    return hashlib.blake2b(array.tobytes(), digest_size=16).digest() + repr((array.shape, array.dtype.str)).encode()


def _remembered(memo: dict, key, make, *args):
    if key not in memo:
        memo[key] = make(*args)
    return memo[key]


def _crops_pooled(model: Decoder, inputs: dict) -> dict:
    """`inputs` with the ink crops pooled to the global view's size once (`Decoder.views` pools them per step otherwise)."""
    return {**inputs, "crop": F.adaptive_avg_pool2d(inputs["crop"], model.config.global_size)}


def _segment(kind: int, values) -> Segment:
    """The geometry of a LINE / ARC option (its stroke type does not change where the turtle goes)."""
    return token_segment(kind, 0, values)


def _look(model: Decoder, inputs: dict, owner: torch.Tensor, states: list[State], canvases: list[Image.Image],
          token: tuple, lstm_state: tuple, first: bool, gain: float | None):
    """One step of reading for N turtles: views at their states, the LSTM step on the previous tokens,
    the re-centred states. -> ctx (N, C), global view, canvas tensor (N, 128, 128), LSTM state, states."""
    st = torch.tensor([s.as_tuple() for s in states], dtype=torch.float32)
    canvas = torch.from_numpy(np.stack([np.asarray(c, np.uint8) for c in canvases])).to(st.device)
    g, l, global_view = model.views(inputs["image"], inputs["crop"], inputs["box"], owner, st, canvas)
    out, lstm_state = model.lstm(torch.cat([model.embed_tokens(*token), g, l], -1)[:, None], lstm_state)
    ctx = torch.cat([out[:, 0], g, l], -1)
    if first:  # nothing to re-centre on yet
        return ctx, global_view, canvas, lstm_state, list(states)
    corr = model.correction_mean(ctx) * (model.config.correction_gain if gain is None else gain)
    return ctx, global_view, canvas, lstm_state, [apply_correction(s, c) for s, c in zip(states, corr.tolist())]


def _first_per_group(group: torch.Tensor, score: torch.Tensor, count: int) -> torch.Tensor:
    """Indices of the `count` best scores within each group value."""
    order = torch.argsort(score, descending=True, stable=True)
    order = order[torch.argsort(group[order], stable=True)]
    g = group[order]
    start = torch.searchsorted(g, g, right=False)
    rank = torch.arange(len(g)) - start
    return order[rank < count]


@torch.inference_mode()
def search(model: Decoder, images: list[np.ndarray], beam: int = 8, samples: int = 0, widths=(3, 3, 2),
           generator: torch.Generator | None = None, gain: float | None = None) -> list[list[tuple[float, list]]]:
    """Per image, the finished hypotheses (logp, tokens). samples > 0: that many ancestral samples per
    image instead of a beam (each step draws one option per hypothesis, Gumbel-max over the options)."""
    device, inputs = next(model.parameters()).device, prepare(images)
    if device.type == "cpu":  # (a device context costs every torch call a little)
        return _search(model, inputs, len(images), beam, samples, widths, generator, gain)
    with torch.device(device):  # tensors made in the search are made on the model's device
        inputs = {k: v.to(device) for k, v in inputs.items()}
        return _search(model, inputs, len(images), beam, samples, widths, generator, gain)


def _search(model: Decoder, inputs: dict, n_images: int, beam: int, samples: int, widths, generator, gain):
    cfg = model.config
    inputs = _crops_pooled(model, inputs)
    hyps = [Hypothesis(i, null_state(tuple(inputs["box"][i].tolist())), Image.new("L", (CANVAS, CANVAS), 0))
            for i in range(n_images) for _ in range(max(samples, 1))]
    h = torch.zeros(1, len(hyps), cfg.hidden)
    lstm_state = (h, h.clone())
    prev = (torch.full((len(hyps),), -1), torch.full((len(hyps),), -1), torch.zeros(len(hyps), 4), torch.zeros(len(hyps), 4))
    finished: list[list] = [[] for _ in range(n_images)]
    boxes = [tuple(b) for b in inputs["box"].tolist()]
    n_strokes, n_turns, n_values = widths
    for t in range(cfg.max_steps):
        if not hyps:
            break
        owner = torch.tensor([hp.image for hp in hyps])
        ctx, global_view, canvas, lstm_state, here = _look(model, inputs, owner, [hp.state for hp in hyps],
                                                           [hp.canvas for hp in hyps], prev, lstm_state, t == 0, gain)
        lk = model.kind_dist(ctx).logits.log_softmax(-1)
        shapes, actions = torch.tensor([hp.shapes for hp in hyps]), torch.tensor([hp.actions for hp in hyps])
        allow = torch.ones_like(lk, dtype=torch.bool)
        allow[:, LINE] = allow[:, ARC] = (shapes > 0) & (actions < cfg.max_shape_actions)
        allow[:, NEXT] = (shapes == 0) | ((shapes == 1) & (actions > 0))
        allow[:, STOP] = (shapes > 0) & (actions > 0)
        if t == 0:
            lk = torch.where(allow, 0.0, -torch.inf)
        if t == cfg.max_steps - 1:
            allow[:, :STOP] = False
        lk = lk.masked_fill(~allow, -torch.inf)
        cands: list[tuple[int, int, int, list, list, float]] = []  # parent, kind, stroke, values, start, delta
        for r in allow[:, STOP].nonzero()[:, 0].tolist():
            cands.append((r, STOP, -1, [0.0] * 4, [0.0] * 4, float(lk[r, STOP])))
        rows = (allow[:, NEXT] & (lk[:, NEXT] > MIN_NEXT_LOGP)).nonzero()[:, 0]  # a new shape only where plausible
        if len(rows):
            cands += _start_options(model, inputs, ctx[rows], global_view[rows], owner[rows], canvas[rows], rows, lk[rows, NEXT], n_turns)
        partial = []
        for kind in (LINE, ARC):
            rows = allow[:, kind].nonzero()[:, 0]
            if len(rows):
                partial += _action_options(model, ctx[rows], rows, kind, lk[rows, kind], actions[rows], n_turns, n_values)
        if partial:
            cands += _with_strokes(model, inputs["image"], ctx, hyps, here, partial, beam + 2 if not samples else 10 ** 6, n_strokes)
        if not cands:
            break
        parent = torch.tensor([c[0] for c in cands])
        total = torch.tensor([hyps[c[0]].logp + c[5] for c in cands])
        if samples:
            noisy = total - torch.empty_like(total).exponential_(generator=generator).log()
            chosen = _first_per_group(parent, noisy, 1)
        else:
            chosen = _first_per_group(owner[parent], total, beam)
        new_hyps, keep, total_l = [], [], total.tolist()
        for i in chosen.tolist():
            p, kind, stroke, values, start, _ = cands[i]
            hp = hyps[p]
            tokens = hp.tokens + [(kind, stroke, tuple(values), tuple(start))]
            if kind == STOP:
                finished[hp.image].append((total_l[i], tokens))
                continue
            box = boxes[hp.image]
            canvas = hp.canvas
            if kind == NEXT:
                state, shapes_n, actions_n = state_from_start(start, box), hp.shapes + 1, 0
            else:
                seg = _segment(kind, values)
                path, state = walk(here[p], seg.kind, seg.turn, seg.length, seg.radius, seg.curvature)
                canvas = canvas.copy()
                draw_paths(canvas, [path], box, pen_width(state.u))
                shapes_n, actions_n = hp.shapes, hp.actions + 1
            new_hyps.append(Hypothesis(hp.image, state, canvas, tokens, total_l[i], shapes_n, actions_n))
            keep.append(i)
        if not keep:
            break
        idx = torch.tensor(keep)
        src = parent[idx]
        lstm_state = (lstm_state[0][:, src], lstm_state[1][:, src])
        prev = (torch.tensor([cands[i][1] for i in keep]), torch.tensor([cands[i][2] for i in keep]),
                torch.tensor([cands[i][3] for i in keep], dtype=torch.float32), torch.tensor([cands[i][4] for i in keep], dtype=torch.float32))
        hyps = new_hyps
    return finished


def _start_options(model: Decoder, inputs, ctx, global_view, owner, canvas, rows, lk_next, n_positions: int) -> list:
    """NEXT options: the heaviest distinct start positions (closer than 3 % of the crop: one), per
    position the 2 heaviest directions and the best unit."""
    head = model.start_head
    xy, w_xy = head.position_options(ctx, global_view, 4 * n_positions)  # (R, P, 2), (R, P)
    pick_r, pick_p = [], []
    apart = ((xy[:, :, None] - xy[:, None, :]).norm(dim=-1) > 0.03).tolist()  # (R, P, P)
    for r in range(len(rows)):
        picked: list[int] = []
        for p in range(xy.shape[1]):
            if all(apart[r][p][q] for q in picked):
                picked.append(p)
            if len(picked) == n_positions:
                break
        pick_r += [r] * len(picked)
        pick_p += picked
    rr, pp = torch.tensor(pick_r), torch.tensor(pick_p)
    pos, w_pos = xy[rr, pp], w_xy[rr, pp]
    feature = model.start_features(inputs["image"], inputs["box"], owner[rr], canvas[rr], pos)
    theta, w_theta = head.direction_options(ctx[rr], feature, 2, tolerance=0.05)
    out = []
    rows_l, lk_l = rows.tolist(), lk_next.tolist()
    for d in range(theta.shape[1]):
        unit, w_unit = head.unit_options(ctx[rr], feature, theta[:, d], 1)
        delta = (w_pos + w_theta[:, d] + w_unit[:, 0]).tolist()
        starts = torch.stack([pos[:, 0], pos[:, 1], theta[:, d], unit[:, 0]], 1).tolist()
        for j, r in enumerate(pick_r):
            out.append((rows_l[r], NEXT, -1, [0.0] * 4, starts[j], lk_l[r] + delta[j]))
    return out


def _action_options(model: Decoder, ctx, rows, kind: int, lk, actions, n_turns: int, n_values: int) -> list:
    """LINE / ARC options of the `rows` hypotheses: the heaviest turn components, per turn the heaviest value
    components (ARC: with the best radius) -> (row, kind, values, delta) in the order turn, value, row. Every turn's
    and value's rows go through a head in one batch (per turn and value alone, the heads' small calls were a quarter
    of decoding's time)."""
    kind_context = model.kind_context(ctx, torch.full((len(rows),), kind))
    turn, w_turn = model.turn_options(kind_context, n_turns)  # (R, J)
    n, n_j = len(rows), turn.shape[1]
    first = (actions == 0)[:, None]  # the first action of a shape: no turn (its direction is the start's)
    tj = torch.where(first, 0.0, turn)
    only_first = torch.full((1, n_j), -torch.inf)
    only_first[0, 0] = 0.0
    wj = torch.where(first, only_first, w_turn)
    turns = tj.T.reshape(-1)  # rows (turn, row)
    turn_context = model.turn_context(kind_context.repeat(n_j, 1), turns)
    if kind == LINE:
        value, w_value = model.length_options(turn_context, n_values)  # (J * R, V)
    else:
        value, w_value = model.curve_options(turn_context, n_values)
    n_v = value.shape[1]
    delta = lk.repeat(n_j) + wj.T.reshape(-1)
    delta = delta[:, None] + w_value  # (J * R, V)
    if kind == ARC:
        radius, w_radius = model.radius_options(turn_context.repeat(n_v, 1), value.T.reshape(-1), 1)  # rows (value, turn, row)
        delta = delta + w_radius[:, 0].view(n_v, n_j * n).T
        radius_l = radius[:, 0].view(n_v, n_j * n).T.tolist()
    value_l, delta_l, tj_l = value.tolist(), delta.tolist(), turns.tolist()
    rows_l = rows.tolist()
    out = []
    for j in range(n_j):
        for v in range(n_v):
            for r, row in enumerate(rows_l):
                i = j * n + r
                if delta_l[i][v] == -np.inf:
                    continue
                if kind == LINE:
                    values = [value_l[i][v], 0.0, 0.0, tj_l[i]]
                else:
                    values = [0.0, radius_l[i][v], value_l[i][v], tj_l[i]]
                out.append((row, kind, values, delta_l[i][v]))
    return out


def _with_strokes(model: Decoder, image, ctx, hyps, here, partial: list, keep: int, n_strokes: int) -> list:
    """The best `keep` action options per image, each with its top stroke types (stroke strips)."""
    owner = torch.tensor([hyps[p].image for p, *_ in partial])
    score = torch.tensor([hyps[p].logp + d for p, _, _, d in partial])
    partial = [partial[i] for i in _first_per_group(owner, score, keep).tolist()]
    strips = torch.tensor([segment_middle(here[p], _segment(k, v)) for p, k, v, _ in partial], dtype=torch.float32)
    parents = torch.tensor([p for p, *_ in partial])
    u = torch.tensor([here[p].u for p, *_ in partial], dtype=torch.float32)
    features = model.strip_features(image, torch.tensor([hyps[p].image for p in parents.tolist()]), strips, u)
    kinds = torch.tensor([k for _, k, _, _ in partial])
    values = torch.tensor([v for _, _, v, _ in partial], dtype=torch.float32)
    logits = model.stroke_logits(ctx[parents], kinds, values, features).log_softmax(-1)
    top = logits.topk(n_strokes, -1)
    out = []
    for i, (p, k, v, d) in enumerate(partial):
        for s, w in zip(top.indices[i].tolist(), top.values[i].tolist()):
            out.append((p, k, s, v, [0.0] * 4, d + w))
    return out


@torch.inference_mode()
def teacher_forced(model: Decoder, images: list[np.ndarray], steps: list[dict], gain: float | None = None,
                   strokes_only: bool = False) -> list[dict]:
    """Step-by-step teacher forcing with the decoder's own turtle: the previous tokens are the truth
    (`steps`: per image, the token arrays of `perception.data.tracing_tokens`, or the `example_steps` that hold
    them; their NEXT steps give the true starts), and the turtle walks the true actions from the re-centred state,
    as in decoding. Per image, per step: the argmax kind, the argmax stroke type given the true action, and the
    heaviest components of the turn / length / curvature / radius heads; and each action's stroke log-probabilities
    (`stroke_logp`). `strokes_only`: the stroke types and their log-probabilities only (the other heads are not run;
    the walk, and so the strokes' outputs, are the same)."""
    inputs, rows = prepare_distinct(images)
    cfg, inputs = model.config, _crops_pooled(model, inputs)
    n = len(images)
    distinct_boxes = inputs["box"].tolist()
    boxes = [tuple(distinct_boxes[r]) for r in rows.tolist()]
    states = [null_state(b) for b in boxes]
    canvases = [Image.new("L", (CANVAS, CANVAS), 0) for _ in range(n)]
    h = torch.zeros(1, n, cfg.hidden)
    lstm_state = (h, h.clone())
    tokens = _step_tokens(steps)  # (n, T) kinds and strokes, (n, T, 4) values and starts
    kinds_all, values_all = tokens[0].tolist(), tokens[2]
    out: list[dict] = [{"kind": [], "stroke": [], "stroke_logp": [], "turn": [], "value": [], "radius": []} for _ in range(n)]
    lengths = [len(s["kind"]) for s in steps]
    for t in range(max(lengths)):
        alive = [i for i in range(n) if t < lengths[i]]
        if strokes_only and all(kinds_all[i][t] == STOP for i in alive):
            break  # nothing left to judge: the last step's reading is not needed
        idx = torch.tensor(alive)
        prev = (torch.full((len(alive),), -1), torch.full((len(alive),), -1), torch.zeros(len(alive), 4), torch.zeros(len(alive), 4)) \
            if t == 0 else tuple(p[idx, t - 1] for p in tokens)
        ctx, _, _, hs, here = _look(model, inputs, rows[idx], [states[i] for i in alive], [canvases[i] for i in alive],
                                    prev, (lstm_state[0][:, idx], lstm_state[1][:, idx]), t == 0, gain)
        lstm_state[0][:, idx], lstm_state[1][:, idx] = hs
        kinds = None if strokes_only else model.kind_dist(ctx).logits.argmax(-1).tolist()
        true_kind, values = tokens[0][idx, t], values_all[idx, t]
        true_l = [kinds_all[i][t] for i in alive]
        a_rows = [r for r, k in enumerate(true_l) if k in (LINE, ARC)]
        segments = {r: _segment(true_l[r], values[r].tolist()) for r in a_rows}
        walked = {r: walk(here[r], seg.kind, seg.turn, seg.length, seg.radius, seg.curvature) for r, seg in segments.items()}
        if a_rows:
            act = torch.tensor(a_rows)
            strips = torch.tensor([segment_middle(here[r], segments[r], walked[r][0]) for r in a_rows], dtype=torch.float32)
            u = torch.tensor([here[r].u for r in a_rows], dtype=torch.float32)
            feats = model.strip_features(inputs["image"], rows[idx[act]], strips, u)
            a_ctx, a_kind, a_val = ctx[act], true_kind[act], values[act]
            stroke_logits = model.stroke_logits(a_ctx, a_kind, a_val, feats)
            strokes = stroke_logits.argmax(-1).tolist()
            stroke_logp = stroke_logits.log_softmax(-1).tolist()
            for j, r in enumerate(a_rows):
                out[alive[r]]["stroke"].append(strokes[j])
                out[alive[r]]["stroke_logp"].append(stroke_logp[j])
            if not strokes_only:
                _value_heads(model, a_ctx, a_kind, a_val, [out[alive[r]] for r in a_rows], [true_l[r] for r in a_rows])
        for r, i in enumerate(alive):
            if kinds is not None:
                out[i]["kind"].append(kinds[r])
            if true_l[r] == NEXT:
                states[i] = state_from_start(steps[i]["start"][t], boxes[i])
            elif r in walked:
                path, states[i] = walked[r]
                canvases[i] = canvases[i].copy()
                draw_paths(canvases[i], [path], boxes[i], pen_width(states[i].u))
    return out


def _step_tokens(steps: list[dict]) -> tuple[torch.Tensor, ...]:
    """The true tokens of every image's steps, padded to the longest: kinds, strokes (n, T), values, starts (n, T, 4)."""
    n, most = len(steps), max(len(s["kind"]) for s in steps)
    kinds, strokes = np.full((n, most), STOP, np.int64), np.full((n, most), -1, np.int64)
    values, starts = np.zeros((n, most, 4), np.float32), np.zeros((n, most, 4), np.float32)
    for i, s in enumerate(steps):
        m = len(s["kind"])
        kinds[i, :m], strokes[i, :m], values[i, :m], starts[i, :m] = s["kind"], s["stroke"], s["values"], s["start"]
    return tuple(torch.from_numpy(a) for a in (kinds, strokes, values, starts))


def _value_heads(model: Decoder, ctx: torch.Tensor, kinds: torch.Tensor, values: torch.Tensor, outs: list[dict],
                 true_kinds: list[int]) -> None:
    """`teacher_forced`'s turn / length / curvature / radius heads for the actions of one step (`outs[j]`: the
    record of action j's image), their heaviest components appended."""
    kind_context = model.kind_context(ctx, kinds)
    turn_context = model.turn_context(kind_context, values[:, TURN])
    turn = model.turn_options(kind_context, 1)[0][:, 0].tolist()
    length = model.length_options(turn_context, 1)[0][:, 0].tolist()
    curve = model.curve_options(turn_context, 1)[0][:, 0]
    radius = model.radius_options(turn_context, values[:, CURVE], 1)[0][:, 0].tolist()
    for j, out in enumerate(outs):
        out["turn"].append(turn[j])
        out["value"].append(length[j] if true_kinds[j] == LINE else float(curve[j]))
        out["radius"].append(radius[j])
