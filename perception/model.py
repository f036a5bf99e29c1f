"""The action decoder: a CNN reads the cropped image, an LSTM with attention emits one action per step.

Per step, heads chained inside the step, each conditioned on what the step already chose:
  kind    softmax over StepKind (line, arc, next shape, stop)       from [h, c]
  stroke  softmax over the 5 dataset stroke types                   from [h, c, kind]
  turn    mixture of Gaussians over turn / 180                      from [h, c, kind, stroke]
  length  mixture of Gaussians (lines)                              from [h, c, kind, stroke, turn]
  curve   mixture of Gaussians over curvature / 360 (arcs)          from [h, c, kind, stroke, turn]
  radius  mixture of Gaussians (arcs)                               from [h, c, kind, stroke, turn, curve]
h is the LSTM output, c the attention read-out of the CNN feature grid. Targets are in travel form
(see `perception.data`); the model sees several equivalent target sequences per image and maximises the
likelihood of the set (logsumexp over the variants of each image).
"""

from __future__ import annotations

import math
from dataclasses import asdict

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Categorical, MixtureSameFamily, Normal

from perception.config import DecoderConfig

N_KINDS = 4  # StepKind
N_STROKES = 5  # DATASET_STROKE_TYPES
N_VALUES = 4  # length, radius, curvature / 360, turn / 180
N_CELL_LABELS = 7  # auxiliary per-cell targets: 5 stroke types, line, arc
LENGTH, RADIUS, CURVE, TURN = range(N_VALUES)
LINE, ARC, NEXT, STOP = range(N_KINDS)


def _conv(c_in: int, c_out: int, stride: int) -> nn.Sequential:
    return nn.Sequential(nn.Conv2d(c_in, c_out, 3, stride, 1, bias=False), nn.BatchNorm2d(c_out), nn.ReLU(inplace=True))


class Encoder(nn.Module):
    """A patch-embedding stem (every pixel seen: stamp outlines survive), then per stage a stride-2 conv
    and a residual 3x3 conv."""

    def __init__(self, config: DecoderConfig):
        super().__init__()
        ch = config.channels
        k = config.stem_stride
        self.stem = nn.Sequential(nn.Conv2d(1, ch[0], k, k, bias=False), nn.BatchNorm2d(ch[0]), nn.ReLU(inplace=True))
        self.down = nn.ModuleList(_conv(ch[i - 1], ch[i], 2) for i in range(1, len(ch)))
        self.body = nn.ModuleList(_conv(ch[i], ch[i], 1) for i in range(1, len(ch)))
        self.grid_stage, self.aux_stage = config.grid_stage, config.aux_stage
        self.aux = nn.Conv2d(ch[config.aux_stage], N_CELL_LABELS, 1)
        grid = config.image_size // config.stem_stride >> config.grid_stage
        self.position = nn.Parameter(torch.zeros(1, ch[config.grid_stage], grid, grid))

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """-> attention memory (B, G, Cg), pooled feature (B, Clast), auxiliary cell logits (B, 7, A, A)."""
        x = self.stem(x)  # (B, C0, S / k, S / k)
        grid = aux = None
        for i, (down, body) in enumerate(zip(self.down, self.body), start=1):
            x = down(x)
            x = x + body(x)  # (B, Ci, S / k / 2^i, S / k / 2^i)
            if i == self.grid_stage:
                grid = x + self.position
            if i == self.aux_stage:
                aux = self.aux(x)
        return grid.flatten(2).transpose(1, 2), x.mean((2, 3)), aux


class MixtureHead(nn.Module):
    """MLP -> a mixture of K Gaussians over one scalar."""

    def __init__(self, n_in: int, config: DecoderConfig):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(n_in, config.head_hidden), nn.ReLU(), nn.Linear(config.head_hidden, 3 * config.mixtures))
        self.min_std = config.min_std

    def forward(self, x: torch.Tensor) -> MixtureSameFamily:
        logits, mean, raw_std = self.net(x).chunk(3, dim=-1)  # (..., K) each
        std = F.softplus(raw_std) + self.min_std
        return MixtureSameFamily(Categorical(logits=logits, validate_args=False), Normal(mean, std, validate_args=False), validate_args=False)


class Decoder(nn.Module):
    def __init__(self, config: DecoderConfig):
        super().__init__()
        self.config = config
        ch, h = config.channels, config.hidden
        self.encoder = Encoder(config)
        self.memory = nn.Linear(ch[config.grid_stage], h)
        self.image = nn.Linear(ch[-1] + 1, h)
        self.token = nn.Linear(N_KINDS + 1 + N_STROKES + N_VALUES + 2, config.embed)
        self.lstm = nn.LSTM(config.embed + h, h, batch_first=True)
        self.init_state = nn.Linear(h, 2 * h)
        self.drop = nn.Dropout(config.dropout)
        ctx = 2 * h
        self.kind_head = nn.Sequential(nn.Linear(ctx, config.head_hidden), nn.ReLU(), nn.Linear(config.head_hidden, N_KINDS))
        self.stroke_head = nn.Sequential(nn.Linear(ctx + N_KINDS, config.head_hidden), nn.ReLU(), nn.Linear(config.head_hidden, N_STROKES))
        base = ctx + N_KINDS + N_STROKES
        self.turn_head = MixtureHead(base, config)
        self.length_head = MixtureHead(base + 2, config)
        self.curve_head = MixtureHead(base + 2, config)
        self.radius_head = MixtureHead(base + 3, config)

    # ------------------------------------------------------------------------------------ pieces

    def encode(self, image: torch.Tensor, side: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(B, 1, S, S), (B,) -> memory (B, G, H), image feature (B, H)."""
        memory, feature, _ = self.encode_all(image, side)
        return memory, feature

    def encode_all(self, image, side):
        grid, pooled, aux = self.encoder(image)
        feature = torch.tanh(self.image(torch.cat([pooled, side[:, None].log()], -1)))
        return self.memory(grid), feature, aux

    def embed_tokens(self, kind: torch.Tensor, stroke: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
        """Previous-step tokens (..., ) -> embeddings (..., E); kind -1 is the start token."""
        kind_hot = F.one_hot((kind + 1).clamp(min=0), N_KINDS + 1).float()
        stroke_hot = F.one_hot(stroke.clamp(min=0), N_STROKES).float() * (stroke >= 0)[..., None]
        turn = values[..., TURN] * math.pi
        x = torch.cat([kind_hot, stroke_hot, values, turn.cos()[..., None], turn.sin()[..., None]], -1)
        return self.token(x)

    def attend(self, h: torch.Tensor, memory: torch.Tensor, weights: bool = False):
        """(N, T, H) queries over (N, G, H) memory -> (N, T, 2H) [h, read-out] (and the weights (N, T, G))."""
        attention = (h @ memory.transpose(1, 2) / math.sqrt(h.shape[-1])).softmax(-1)  # (N, T, G)
        ctx = torch.cat([h, attention @ memory], -1)
        return (ctx, attention) if weights else ctx

    def start_state(self, feature: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        h0, c0 = torch.tanh(self.init_state(feature)).chunk(2, -1)
        return h0[None].contiguous(), c0[None].contiguous()

    def _base(self, ctx, kind, stroke):
        return torch.cat([ctx, F.one_hot(kind, N_KINDS).float(), F.one_hot(stroke, N_STROKES).float()], -1)

    @staticmethod
    def _angle(value: torch.Tensor) -> torch.Tensor:
        turn = value * math.pi
        return torch.stack([turn.cos(), turn.sin()], -1)

    def kind_dist(self, ctx: torch.Tensor) -> Categorical:
        return Categorical(logits=self.kind_head(ctx), validate_args=False)

    def stroke_dist(self, ctx: torch.Tensor, kind: torch.Tensor) -> Categorical:
        return Categorical(logits=self.stroke_head(torch.cat([ctx, F.one_hot(kind, N_KINDS).float()], -1)), validate_args=False)

    def turn_dist(self, ctx, kind, stroke) -> MixtureSameFamily:
        return self.turn_head(self._base(ctx, kind, stroke))

    def length_dist(self, ctx, kind, stroke, turn) -> MixtureSameFamily:
        return self.length_head(torch.cat([self._base(ctx, kind, stroke), self._angle(turn)], -1))

    def curve_dist(self, ctx, kind, stroke, turn) -> MixtureSameFamily:
        return self.curve_head(torch.cat([self._base(ctx, kind, stroke), self._angle(turn)], -1))

    def radius_dist(self, ctx, kind, stroke, turn, curve) -> MixtureSameFamily:
        return self.radius_head(torch.cat([self._base(ctx, kind, stroke), self._angle(turn), curve[:, None]], -1))

    def step_logp(self, ctx, kind, stroke, values, has_turn) -> torch.Tensor:
        """Log-likelihood of each target step; rows (M, ...) flattened from (N, T), padding excluded."""
        logp = self.kind_dist(ctx).log_prob(kind)
        act = (kind == LINE) | (kind == ARC)
        a_ctx, a_kind, a_stroke, a_val, a_turn = ctx[act], kind[act], stroke[act], values[act], has_turn[act]
        a_logp = self.stroke_dist(a_ctx, a_kind).log_prob(a_stroke)
        a_logp = a_logp + self.turn_dist(a_ctx, a_kind, a_stroke).log_prob(a_val[:, TURN]) * a_turn
        line, arc = a_kind == LINE, a_kind == ARC
        turn = a_val[:, TURN]
        a_logp[line] += self.length_dist(a_ctx[line], a_kind[line], a_stroke[line], turn[line]).log_prob(a_val[line, LENGTH])
        v = a_val[arc]
        arc_args = (a_ctx[arc], a_kind[arc], a_stroke[arc], turn[arc])
        a_logp[arc] += self.curve_dist(*arc_args).log_prob(v[:, CURVE]) + self.radius_dist(*arc_args, v[:, CURVE]).log_prob(v[:, RADIUS])
        return logp.index_put((act.nonzero()[:, 0],), a_logp, accumulate=True)

    def previous_tokens(self, kind, stroke, values):
        """Teacher forcing: inputs are the targets shifted right behind a start token."""
        start = torch.full_like(kind[:, :1], -1)
        return (torch.cat([start, kind[:, :-1]], 1), torch.cat([torch.full_like(stroke[:, :1], -1), stroke[:, :-1]], 1),
                torch.cat([torch.zeros_like(values[:, :1]), values[:, :-1]], 1))

    # ----------------------------------------------------------------------------------- forward

    def forward(self, x: dict[str, torch.Tensor], targets: dict[str, torch.Tensor] | None = None):
        """x: image (B, 1, S, S), side (B,). targets: kind, stroke (N, T), values (N, T, 4), has_turn (N, T),
        owner (N,) image of each target variant. Returns (outputs, loss): outputs holds the per-variant
        log-likelihoods and the per-step head distributions; loss = -mean over images of the logsumexp
        of its variants' log-likelihoods, divided by the mean number of steps, plus (if targets has `cells`,
        (B, 7, A, A)) the auxiliary per-cell binary cross-entropy, which gives the CNN dense supervision."""
        memory, feature, aux = self.encode_all(x["image"], x["side"])
        if targets is None:
            return {"memory": memory, "feature": feature}, None
        owner, kind, stroke, values = targets["owner"], targets["kind"], targets["stroke"], targets["values"]
        ctx, attention = self.teacher_forced(memory[owner], feature[owner], kind, stroke, values, weights=True)  # (N, T, 2H)
        valid = kind >= 0  # (N, T)
        rows = valid.nonzero(as_tuple=True)
        logp = torch.zeros_like(valid, dtype=ctx.dtype).index_put(
            rows, self.step_logp(ctx[rows], kind[rows], stroke[rows].clamp(min=0), values[rows], targets["has_turn"][rows]))
        sequence = logp.sum(1)  # (N,)
        n_images = feature.shape[0]
        per_image = torch.full((n_images, owner.shape[0]), -math.inf).index_put((owner, torch.arange(owner.shape[0])), sequence)
        loss = -per_image.logsumexp(1).mean() / valid.sum(1).float().mean()
        if "cells" in targets and self.config.aux_weight:
            loss = loss + self.config.aux_weight * F.binary_cross_entropy_with_logits(aux, targets["cells"].float())
        if "action_cells" in targets and self.config.attention_weight:
            n, t = (targets["action"] >= 0).nonzero(as_tuple=True)
            mask = targets["action_cells"][owner[n], targets["action"][n, t]].flatten(1)  # (M, G)
            mass = (attention[n, t] * mask).sum(-1)
            loss = loss + self.config.attention_weight * -(mass + 1e-4).log().mean()
        return {"sequence_logp": sequence, "step_logp": logp, "memory": memory, "feature": feature}, loss

    def teacher_forced(self, memory, feature, kind, stroke, values, weights: bool = False):
        """Contexts (N, T, 2H) of every step when the previous steps are the targets (and attention weights)."""
        inputs = self.embed_tokens(*self.previous_tokens(kind, stroke, values))  # (N, T, E)
        steps = torch.cat([inputs, feature[:, None].expand(-1, inputs.shape[1], -1)], -1)
        h, _ = self.lstm(self.drop(steps), self.start_state(feature))  # (N, T, H)
        ctx, attention = self.attend(h, memory, weights=True)
        return (self.drop(ctx), attention) if weights else self.drop(ctx)

    @torch.no_grad()
    def greedy_steps(self, memory, feature, kind, stroke, values) -> tuple[torch.Tensor, torch.Tensor]:
        """Teacher-forced argmax kind (B, T) and argmax stroke given the target kind (B, T)."""
        ctx = self.teacher_forced(memory, feature, kind, stroke, values)
        pred_kind = self.kind_dist(ctx).logits.argmax(-1)
        pred_stroke = self.stroke_dist(ctx, kind.clamp(min=0)).logits.argmax(-1)
        return pred_kind, pred_stroke

    # ----------------------------------------------------------------------------------- decoding

    @torch.no_grad()
    def step(self, token, state, feature, memory):
        """One decoding step for N partial programs: token = (kind, stroke, values) of the previous step
        ((N,), (N,), (N, 4)); returns the attention context (N, 2H) and the new LSTM state."""
        inp = torch.cat([self.embed_tokens(*token), feature], -1)[:, None]  # (N, 1, E + H)
        h, state = self.lstm(inp, state)
        return self.attend(h, memory)[:, 0], state

    @torch.no_grad()
    def expand(self, ctx, shapes, actions, last: bool, widths: tuple[int, int, int]) -> dict[str, torch.Tensor]:
        """Every continuation of N partial programs worth keeping, as flat candidate tensors: parent (M,),
        kind, stroke (M,), values (M, 4) and delta (M,) = log-probability of the step. Continuous heads offer
        their mixture components (means; close components merged) as discrete options, scored by their
        weights. widths = (strokes, turns, lengths-or-curvatures) kept per head; the radius takes the best."""
        n_strokes, n_turns, n_values = widths
        lk = self.kind_dist(ctx).logits.log_softmax(-1)  # (N, 4)
        allow = torch.ones_like(lk, dtype=torch.bool)
        allow[:, :2] &= (actions < self.config.max_shape_actions)[:, None]
        allow[:, NEXT] &= (shapes == 1) & (actions > 0)
        allow[:, STOP] &= actions > 0
        if last:
            allow[:, :STOP] = False
        out = {k: [] for k in ("parent", "kind", "stroke", "values", "delta")}

        def add(parent, kind, stroke, values, delta):
            keep = torch.isfinite(delta)
            for key, value in zip(out, (parent, kind, stroke, values, delta)):
                out[key].append(value[keep])

        for k in (NEXT, STOP):
            rows = allow[:, k].nonzero()[:, 0]
            add(rows, torch.full_like(rows, k), torch.full_like(rows, -1), ctx.new_zeros(len(rows), N_VALUES), lk[rows, k])
        rows, kind = allow[:, :2].nonzero(as_tuple=True)  # (R,)
        if len(rows) == 0:
            return {k: torch.cat(v) for k, v in out.items()}
        top = self.stroke_dist(ctx[rows], kind).logits.log_softmax(-1).topk(n_strokes)  # (R, s)
        delta = (lk[rows, kind][:, None] + top.values).flatten()
        rows, kind, stroke = rows.repeat_interleave(n_strokes), kind.repeat_interleave(n_strokes), top.indices.flatten()
        turn, weight = mixture_options(self.turn_dist(ctx[rows], kind, stroke), n_turns)  # (R2, n)
        first = actions[rows] == 0  # the first turn of a shape is 0 by construction
        turn[first], weight[first] = 0.0, -math.inf
        weight[first, 0] = 0.0
        n = turn.shape[1]
        rows, kind, stroke = rows.repeat_interleave(n), kind.repeat_interleave(n), stroke.repeat_interleave(n)
        turn, delta = turn.flatten(), delta.repeat_interleave(n) + weight.flatten()
        c = ctx[rows]
        length, w_length = mixture_options(self.length_dist(c, kind, stroke, turn), n_values)
        curve, w_curve = mixture_options(self.curve_dist(c, kind, stroke, turn), n_values)
        line = (kind == LINE)[:, None]
        value, weight = torch.where(line, length, curve), torch.where(line, w_length, w_curve)  # (R3, v)
        n = value.shape[1]
        rows, kind, stroke = rows.repeat_interleave(n), kind.repeat_interleave(n), stroke.repeat_interleave(n)
        turn, value, delta = turn.repeat_interleave(n), value.flatten(), delta.repeat_interleave(n) + weight.flatten()
        values = ctx.new_zeros(len(rows), N_VALUES)
        values[:, TURN] = turn
        arc = kind == ARC
        values[:, LENGTH] = torch.where(arc, 0.0, value)
        values[:, CURVE] = torch.where(arc, value, 0.0)
        if arc.any():
            a = arc.nonzero()[:, 0]
            radius, w_radius = mixture_options(self.radius_dist(ctx[rows[a]], kind[a], stroke[a], turn[a], value[a]), 1)
            values[a, RADIUS] = radius[:, 0]
            delta[a] += w_radius[:, 0]
        add(rows, kind, stroke, values, delta)
        return {k: torch.cat(v) for k, v in out.items()}

    @torch.no_grad()
    def search(self, image, side, beam: int = 8, samples: int = 0, widths=(3, 3, 2), generator=None) -> list[list[tuple]]:
        """Beam search (samples = 0) or ancestral sampling (samples per image) over the discrete options of
        `expand`. Returns per image a list of finished programs (logp, [(kind, stroke, values), ...])."""
        memory, feature = self.encode(image, side)
        n_images = image.shape[0]
        img = torch.arange(n_images).repeat_interleave(max(samples, 1))
        state = self.start_state(feature[img])
        kind, stroke = torch.full_like(img, -1), torch.full_like(img, -1)
        values, logp = feature.new_zeros(len(img), N_VALUES), feature.new_zeros(len(img))
        shapes, actions = torch.ones_like(img), torch.zeros_like(img)
        tokens: list[list] = [[] for _ in img]
        finished: list[list] = [[] for _ in range(n_images)]
        for t in range(self.config.max_steps):
            if len(img) == 0:
                break
            ctx, state = self.step((kind, stroke, values), state, feature[img], memory[img])
            cand = self.expand(ctx, shapes, actions, t == self.config.max_steps - 1, widths)
            total = logp[cand["parent"]] + cand["delta"]
            if samples:
                noisy = total - torch.empty_like(total).exponential_(generator=generator).log()  # Gumbel-max per parent
                chosen = _first_per_group(cand["parent"], noisy, 1)
            else:
                chosen = _first_per_group(img[cand["parent"]], total, beam)
            parent, k = cand["parent"][chosen], cand["kind"][chosen]
            new_tokens = [tokens[p] + [(int(a), int(b), tuple(v))] for p, a, b, v in
                          zip(parent.tolist(), k.tolist(), cand["stroke"][chosen].tolist(), cand["values"][chosen].tolist())]
            for i in (k == STOP).nonzero()[:, 0].tolist():
                finished[int(img[parent[i]])].append((float(total[chosen[i]]), new_tokens[i]))
            alive = (k != STOP).nonzero()[:, 0]
            parent = parent[alive]
            img, kind, stroke = img[parent], k[alive], cand["stroke"][chosen][alive]
            values, logp = cand["values"][chosen][alive], total[chosen][alive]
            state = (state[0][:, parent], state[1][:, parent])
            shapes = shapes[parent] + (kind == NEXT).long()
            actions = torch.where(kind == NEXT, 0, actions[parent] + 1)
            tokens = [new_tokens[i] for i in alive.tolist()]
        return finished

    def checkpoint(self) -> dict:
        return {"config": asdict(self.config), "model": self.state_dict()}


def mixture_options(mixture: MixtureSameFamily, n: int, tolerance: float = 0.02) -> tuple[torch.Tensor, torch.Tensor]:
    """The n heaviest component means of a mixture (R rows) with their log-weights, components closer than
    `tolerance` merged into the heavier one: values (R, n), log-weights (R, n)."""
    mean, logw = mixture.component_distribution.loc, mixture.mixture_distribution.logits  # (R, K)
    logw, order = logw.sort(-1, descending=True)
    mean = mean.gather(-1, order)
    close = (mean[:, :, None] - mean[:, None, :]).abs() < tolerance  # (R, K, K)
    leader = close.float().argmax(-1)  # the heaviest close component of each
    member = F.one_hot(leader, mean.shape[1]).bool()  # (R, K_i, K_j): i merges into j
    merged = logw[:, :, None].expand_as(member).masked_fill(~member, -math.inf).logsumexp(1)  # (R, K)
    top = merged.topk(min(n, mean.shape[1]), -1)
    return mean.gather(-1, top.indices), top.values


def _first_per_group(group: torch.Tensor, score: torch.Tensor, count: int) -> torch.Tensor:
    """Indices of the `count` best scores within each group value."""
    order = torch.argsort(score, descending=True, stable=True)
    order = order[torch.argsort(group[order], stable=True)]
    g = group[order]
    start = torch.searchsorted(g, g, right=False)
    rank = torch.arange(len(g)) - start
    return order[rank < count]
