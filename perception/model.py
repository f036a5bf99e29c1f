"""The action decoder: CNNs read the image where the turtle is, an LSTM emits one action per step.

Per step t the decoder looks at three views (`perception.glimpse`):
  global  the ink crop and the drawn-so-far canvas at 64 px          -> g (what is left to draw, where)
  local   a glimpse of both around the turtle, rotated to its travel -> l (what leaves the turtle here)
  strip   the image along one candidate action (given its geometry)  -> the stroke type
The LSTM reads [previous token, g, l]; heads on ctx = [h, g, l], chained inside the step, each
conditioned on what the step already chose:
  kind        softmax over StepKind (line, arc, next shape, stop)
  start       NEXT steps: where the shape starts (mixture of 2-D Gaussians over the crop), its travel
              direction (mixture of von Mises), its unit (mixture of Gaussians over log(u / crop side))
  turn        mixture of Gaussians over turn / 180                          from [ctx, kind]
  length      mixture of Gaussians (lines)                                  from [ctx, kind, turn]
  curve       mixture of Gaussians over curvature / 360 (arcs)              from [ctx, kind, turn]
  radius      mixture of Gaussians (arcs)                                   from [ctx, kind, turn, curve]
  stroke      softmax over the 5 dataset stroke types        from [ctx, kind, turn, values, strip view]
  correction  Gaussian over the offset of the true turtle state from the assumed one (re-centring)
All mixtures are `torch.distributions` objects. Training is teacher-forced on the target tracing
(`perception.data`); decoding (`perception.beam`) walks the turtle along the decoded actions.
"""

from __future__ import annotations

import math
from dataclasses import asdict

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Categorical, Independent, MixtureSameFamily, Normal, VonMises

from perception.config import DecoderConfig
from perception.glimpse import glimpse_grid, glimpse_points, points_grid
from perception.settings import LOCAL_REACH, START_REACH, STRIP_ACROSS, STRIP_ALONG

N_KINDS = 4  # StepKind
N_STROKES = 5  # DATASET_STROKE_TYPES
N_VALUES = 4  # length, radius, curvature / 360, turn / 180
LENGTH, RADIUS, CURVE, TURN = range(N_VALUES)
LINE, ARC, NEXT, STOP = range(N_KINDS)
TOKEN = N_KINDS + 1 + N_STROKES + N_VALUES + 2 + 5


def _mlp(n_in: int, n_out: int, hidden: int) -> nn.Sequential:
    return nn.Sequential(nn.Linear(n_in, hidden), nn.ReLU(), nn.Linear(hidden, n_out))


def _conv(c_in: int, c_out: int, stride: int) -> list[nn.Module]:
    """A 3x3 convolution (no bias), BatchNorm, ReLU."""
    return [nn.Conv2d(c_in, c_out, 3, stride, 1, bias=False), nn.BatchNorm2d(c_out), nn.ReLU(inplace=True)]


class ViewCNN(nn.Module):
    """Stride-2 3x3 conv stages (BatchNorm, ReLU), flattened (positions matter), then a linear layer."""

    def __init__(self, c_in: int, size: tuple[int, int], channels: tuple[int, ...], out: int, stem: bool = False):
        super().__init__()
        layers, c = [], c_in
        if stem:  # a stride-1 layer first: stamp outlines are 1-2 px thick
            layers += _conv(c, channels[0], 1)
            c = channels[0]
        h, w = size
        for width in channels:
            layers += _conv(c, width, 2)
            c, h, w = width, (h + 1) // 2, (w + 1) // 2
        self.net = nn.Sequential(*layers, nn.Flatten(), nn.Linear(c * h * w, out), nn.ReLU(inplace=True))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)


class MixtureHead(nn.Module):
    """MLP -> a mixture of K Gaussians over one scalar."""

    def __init__(self, n_in: int, config: DecoderConfig):
        super().__init__()
        self.net = _mlp(n_in, 3 * config.mixtures, config.head_hidden)
        self.min_std = config.min_std

    def forward(self, x: torch.Tensor) -> MixtureSameFamily:
        logits, mean, raw_std = self.net(x).chunk(3, dim=-1)
        std = F.softplus(raw_std) + self.min_std
        return MixtureSameFamily(Categorical(logits=logits, validate_args=False), Normal(mean, std, validate_args=False), validate_args=False)

    def components(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """The mixture's component means and normalised logits, as `forward`'s distribution holds them (R, K) each,
        without building it (decoding's hot loop: `top_components`)."""
        logits, mean, _ = self.net(x).chunk(3, dim=-1)
        return mean, normalised(logits)


class StartHead(nn.Module):
    """Where a shape starts. Position: a heat map over the global view — a mixture of 2-D Gaussians, one
    per cell of a 32 x 32 grid over the crop (weight and offset per cell; coordinate channels let it
    prefer the top-most candidate; FiLM from ctx says which shape is wanted). Direction (mixture of von
    Mises) and unit (mixture of Gaussians over log(u / crop side)): from ctx and an upright glimpse of the
    image and the canvas around the start (START_REACH of the crop side each way)."""

    def __init__(self, n_in: int, config: DecoderConfig):
        super().__init__()
        g = config.global_size
        self.cells = g // 2
        self.map = nn.Sequential(*_conv(4, 16, 1), *_conv(16, 32, 2), *_conv(32, 32, 1), *_conv(32, 32, 1))
        self.film = nn.Linear(n_in, 64)
        self.out = nn.Conv2d(32, 4, 1)  # logit, offset x, offset y, log std
        centres = (torch.arange(self.cells) + 0.5) / self.cells
        self.register_buffer("centres", torch.stack(torch.meshgrid(centres, centres, indexing="xy"), -1).reshape(-1, 2), persistent=False)
        coords = torch.linspace(-1, 1, g)
        self.register_buffer("coords", torch.stack(torch.meshgrid(coords, coords, indexing="xy"), 0)[None], persistent=False)
        self.glimpse = ViewCNN(2, (config.local_size,) * 2, config.channels, config.feature)
        self.direction = _mlp(n_in + config.feature, 3 * config.mixtures, config.head_hidden)
        self.unit = MixtureHead(n_in + config.feature + 2, config)
        self.min_std = config.min_std

    def position_dist(self, ctx: torch.Tensor, global_view: torch.Tensor) -> MixtureSameFamily:
        logit, mean, raw = self._position(ctx, global_view)
        std = (F.softplus(raw) / self.cells + self.min_std / 4)[..., None].expand_as(mean)
        return MixtureSameFamily(Categorical(logits=logit, validate_args=False),
                                 Independent(Normal(mean, std, validate_args=False), 1, validate_args=False), validate_args=False)

    def position_options(self, ctx: torch.Tensor, global_view: torch.Tensor, n: int) -> tuple[torch.Tensor, torch.Tensor]:
        """`mixture_options(self.position_dist(ctx, global_view), n)` without building the distribution."""
        logit, mean, _ = self._position(ctx, global_view)
        return top_components(mean, normalised(logit), n)

    def _position(self, ctx: torch.Tensor, global_view: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """The position mixture's logits (R, cells^2), means (R, cells^2, 2) and raw spreads (R, cells^2)."""
        x = self.map(torch.cat([global_view, self.coords.expand(len(global_view), -1, -1, -1)], 1))
        gamma, beta = self.film(ctx).chunk(2, -1)
        x = x * (1 + gamma[:, :, None, None]) + beta[:, :, None, None]
        logit, dx, dy, raw = self.out(F.relu(x)).flatten(2).unbind(1)  # (R, cells^2) each
        return logit, self.centres + torch.stack([dx, dy], -1).tanh() / self.cells, raw

    def direction_dist(self, ctx: torch.Tensor, feature: torch.Tensor) -> MixtureSameFamily:
        logits, loc, raw = self.direction(torch.cat([ctx, feature], -1)).chunk(3, -1)
        return MixtureSameFamily(Categorical(logits=logits, validate_args=False),
                                 VonMises(loc, F.softplus(raw) + 1.0, validate_args=False), validate_args=False)

    def direction_options(self, ctx: torch.Tensor, feature: torch.Tensor, n: int, tolerance: float) -> tuple[torch.Tensor, torch.Tensor]:
        """`mixture_options(self.direction_dist(ctx, feature), n, tolerance)` without building the distribution."""
        logits, loc, _ = self.direction(torch.cat([ctx, feature], -1)).chunk(3, -1)
        return top_components(loc, normalised(logits), n, tolerance)

    def unit_dist(self, ctx: torch.Tensor, feature: torch.Tensor, theta: torch.Tensor) -> MixtureSameFamily:
        return self.unit(self._unit_input(ctx, feature, theta))

    def unit_options(self, ctx: torch.Tensor, feature: torch.Tensor, theta: torch.Tensor, n: int) -> tuple[torch.Tensor, torch.Tensor]:
        """`mixture_options(self.unit_dist(ctx, feature, theta), n)` without building the distribution."""
        return top_components(*self.unit.components(self._unit_input(ctx, feature, theta)), n)

    @staticmethod
    def _unit_input(ctx: torch.Tensor, feature: torch.Tensor, theta: torch.Tensor) -> torch.Tensor:
        return torch.cat([ctx, feature, theta.cos()[:, None], theta.sin()[:, None]], -1)


def sample_per_image(images: torch.Tensor, grids: torch.Tensor, owner: torch.Tensor) -> torch.Tensor:
    """grid_sample of `images` (B, C, H, W) at `grids` (N, h, w, 2), row n from image owner[n] -> (N, C, h, w);
    one call: the grids of each image are stacked and padded."""
    b, (n, h, w, _) = images.shape[0], grids.shape
    if n and (b == 1 or (n == b and torch.equal(owner, torch.arange(b)))):  # nothing to pad: the same call, the same numbers
        out = F.grid_sample(images, grids.reshape(b, (n // b) * h, w, 2), align_corners=False)
        return out.view(b, images.shape[1], n // b, h, w).transpose(1, 2).reshape(n, images.shape[1], h, w)
    counts = torch.bincount(owner, minlength=b)
    order = torch.argsort(owner, stable=True)
    sorted_owner = owner[order]
    slot = torch.arange(n) - (torch.cumsum(counts, 0) - counts)[sorted_owner]
    m = int(counts.max()) if n else 0
    padded = grids.new_full((b, max(m, 1), h, w, 2), 2.0)  # outside the image: zeros
    padded[sorted_owner, slot] = grids[order]
    out = F.grid_sample(images, padded.view(b, -1, w, 2), align_corners=False).view(b, images.shape[1], -1, h, w)
    result = grids.new_empty(n, images.shape[1], h, w)
    result[order] = out[sorted_owner, :, slot]
    return result


class Decoder(nn.Module):
    def __init__(self, config: DecoderConfig):
        super().__init__()
        self.config = config
        f, h, hh = config.feature, config.hidden, config.head_hidden
        self.global_cnn = ViewCNN(2, (config.global_size,) * 2, config.channels, f)
        self.local_cnn = ViewCNN(2, (config.local_size,) * 2, config.channels, f)
        self.strip_cnn = ViewCNN(1, tuple(config.strip_size), config.channels[:3], f // 2, stem=True)
        self.token = nn.Linear(TOKEN, config.embed)
        self.lstm = nn.LSTM(config.embed + 2 * f, h, batch_first=True)
        self.drop = nn.Dropout(config.dropout)
        ctx = h + 2 * f
        self.kind_head = _mlp(ctx, N_KINDS, hh)
        self.start_head = StartHead(ctx, config)
        self.turn_head = MixtureHead(ctx + N_KINDS, config)
        self.length_head = MixtureHead(ctx + N_KINDS + 2, config)
        self.curve_head = MixtureHead(ctx + N_KINDS + 2, config)
        self.radius_head = MixtureHead(ctx + N_KINDS + 3, config)
        self.stroke_head = _mlp(ctx + N_KINDS + 2 + N_VALUES + f // 2, N_STROKES, hh)
        self.correction_head = _mlp(ctx, 8, hh)

    # --------------------------------------------------------------------------------- views

    def views(self, image: torch.Tensor, crop: torch.Tensor, box: torch.Tensor, owner: torch.Tensor,
              state: torch.Tensor, canvas: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Global and local features (N, F) and the global view (N, 2, G, G) of N steps: image (B, 1, 512, 512) ink in [0, 1], crop
        (B, 1, 128, 128) or already pooled to (B, 1, G, G) (decoding: once per image, the same numbers), box (B, 3), owner (N,),
        state (N, 4), canvas (N, 128, 128) uint8."""
        c = self.config
        drawn = canvas[:, None].float() / 255.0
        ink = crop[owner] if crop.shape[-1] == c.global_size else F.adaptive_avg_pool2d(crop[owner], c.global_size)
        global_view = torch.cat([ink, F.adaptive_avg_pool2d(drawn, c.global_size)], 1)
        full = state.new_tensor([0.0, 0.0, 512.0]).expand(len(state), 3)
        points = glimpse_points(state, (LOCAL_REACH, LOCAL_REACH), (c.local_size, c.local_size))
        target = sample_per_image(image, points_grid(points, full), owner)
        mine = F.grid_sample(drawn, points_grid(points, box[owner]), align_corners=False)
        return self.global_cnn(global_view), self.local_cnn(torch.cat([target, mine], 1)), global_view

    def start_features(self, image, box, owner, canvas, xy) -> torch.Tensor:
        """Upright glimpses (image, canvas) around start candidates xy (R, 2) in crop units -> (R, F)."""
        c = self.config
        b = box[owner]
        px, py = b[:, 0] + xy[:, 0] * b[:, 2], b[:, 1] + xy[:, 1] * b[:, 2]
        states = torch.stack([px, py, torch.zeros_like(px), b[:, 2]], 1)
        full = states.new_tensor([0.0, 0.0, 512.0]).expand(len(states), 3)
        size = (c.local_size, c.local_size)
        target = sample_per_image(image, glimpse_grid(states, (START_REACH, START_REACH), size, full), owner)
        mine = F.grid_sample(canvas[:, None].float() / 255.0, glimpse_grid(states, (START_REACH, START_REACH), size, b), align_corners=False)
        return self.start_head.glimpse(torch.cat([target, mine], 1))

    def start_log_prob(self, ctx, global_view, image, box, owner, canvas, start) -> torch.Tensor:
        head = self.start_head
        xy, theta, log_u = start[:, :2], start[:, 2], start[:, 3]
        feature = self.start_features(image, box, owner, canvas, xy)
        return (head.position_dist(ctx, global_view).log_prob(xy) + head.direction_dist(ctx, feature).log_prob(theta)
                + head.unit_dist(ctx, feature, theta).log_prob(log_u))

    def strip_features(self, image: torch.Tensor, owner: torch.Tensor, strip: torch.Tensor, u: torch.Tensor) -> torch.Tensor:
        """Stroke-strip features (N, F/2): strip (N, 4) = (x, y, tangent, length) of each action's middle."""
        rows, cols = self.config.strip_size
        states = torch.stack([strip[:, 0], strip[:, 1], strip[:, 2], u], 1)
        full = states.new_tensor([0.0, 0.0, 512.0]).expand(len(states), 3)
        grid = glimpse_grid(states, (STRIP_ALONG / 2, STRIP_ACROSS / 2), (rows, cols), full)
        return self.strip_cnn(sample_per_image(image, grid, owner))

    @staticmethod
    def ink(image: torch.Tensor) -> torch.Tensor:
        return image.float() / 255.0 if image.dtype == torch.uint8 else image

    # --------------------------------------------------------------------------------- tokens

    def embed_tokens(self, kind, stroke, values, start) -> torch.Tensor:
        """Previous-step tokens -> embeddings; kind -1 is the start-of-image token."""
        kind_hot = F.one_hot((kind + 1).clamp(min=0), N_KINDS + 1).float()
        stroke_hot = F.one_hot(stroke.clamp(min=0), N_STROKES).float() * (stroke >= 0)[..., None]
        turn = values[..., TURN] * math.pi
        s = start
        start_feat = torch.stack([s[..., 0], s[..., 1], s[..., 2].cos(), s[..., 2].sin(), s[..., 3]], -1) * (kind == NEXT)[..., None]
        return self.token(torch.cat([kind_hot, stroke_hot, values, turn.cos()[..., None], turn.sin()[..., None], start_feat], -1))

    @staticmethod
    def _angle(value: torch.Tensor) -> torch.Tensor:
        turn = value * math.pi
        return torch.stack([turn.cos(), turn.sin()], -1)

    # --------------------------------------------------------------------------------- heads

    def kind_dist(self, ctx) -> Categorical:
        return Categorical(logits=self.kind_head(ctx), validate_args=False)

    def turn_dist(self, ctx, kind) -> MixtureSameFamily:
        return self.turn_head(self.kind_context(ctx, kind))

    def _base(self, ctx, kind, turn):
        return self.turn_context(self.kind_context(ctx, kind), turn)

    def length_dist(self, ctx, kind, turn) -> MixtureSameFamily:
        return self.length_head(self._base(ctx, kind, turn))

    def curve_dist(self, ctx, kind, turn) -> MixtureSameFamily:
        return self.curve_head(self._base(ctx, kind, turn))

    def radius_dist(self, ctx, kind, turn, curve) -> MixtureSameFamily:
        return self.radius_head(torch.cat([self._base(ctx, kind, turn), curve[:, None]], -1))

    # The heads' `n` heaviest components (`mixture_options` of the distributions above, the same numbers without
    # building the distributions), for decoding's hot loop: `kind_context` once, then the heads along the chain.

    def kind_context(self, ctx, kind) -> torch.Tensor:
        """[ctx, kind]: what the turn head reads (N, C + 4)."""
        return torch.cat([ctx, F.one_hot(kind, N_KINDS).float()], -1)

    def turn_context(self, kind_context, turn) -> torch.Tensor:
        """[ctx, kind, turn]: what the length and curve heads read, and the radius head before the curve."""
        return torch.cat([kind_context, self._angle(turn)], -1)

    def turn_options(self, kind_context, n: int) -> tuple[torch.Tensor, torch.Tensor]:
        return top_components(*self.turn_head.components(kind_context), n)

    def length_options(self, turn_context, n: int) -> tuple[torch.Tensor, torch.Tensor]:
        return top_components(*self.length_head.components(turn_context), n)

    def curve_options(self, turn_context, n: int) -> tuple[torch.Tensor, torch.Tensor]:
        return top_components(*self.curve_head.components(turn_context), n)

    def radius_options(self, turn_context, curve, n: int) -> tuple[torch.Tensor, torch.Tensor]:
        return top_components(*self.radius_head.components(torch.cat([turn_context, curve[:, None]], -1)), n)

    def stroke_logits(self, ctx, kind, values, strip_feature) -> torch.Tensor:
        return self.stroke_head(torch.cat([self._base(ctx, kind, values[:, TURN]), values, strip_feature], -1))

    def correction_dist(self, ctx) -> Independent:
        mean, raw = self.correction_head(ctx).chunk(2, -1)
        return Independent(Normal(mean, F.softplus(raw) + 1e-3, validate_args=False), 1, validate_args=False)

    def correction_mean(self, ctx) -> torch.Tensor:
        """`correction_dist(ctx).mean` without building the distribution (decoding)."""
        return self.correction_head(ctx).chunk(2, -1)[0]

    # ------------------------------------------------------------------------------ training

    def contexts(self, batch: dict[str, torch.Tensor]):
        """Teacher-forced contexts ctx (N, C) of the valid steps (rows = (image, step) indices)."""
        image, kind = self.ink(batch["image"]), batch["kind"]
        rows = (kind >= 0).nonzero(as_tuple=True)
        g, l, global_view = self.views(image, batch["crop"], batch["box"], rows[0], batch["state"][rows], batch["canvas"][rows])
        b, t = kind.shape
        seen = torch.zeros(b, t, 2 * g.shape[1]).index_put(rows, torch.cat([g, l], 1))
        prev = lambda x, fill: torch.cat([torch.full_like(x[:, :1], fill), x[:, :-1]], 1)  # noqa: E731
        tokens = self.embed_tokens(prev(kind, -1), prev(batch["stroke"], -1), prev(batch["values"], 0.0), prev(batch["start"], 0.0))
        h, _ = self.lstm(self.drop(torch.cat([tokens, seen], -1)))
        ctx = self.drop(torch.cat([h[rows], g, l], 1))
        return ctx, rows, image, global_view

    def forward(self, batch: dict[str, torch.Tensor]) -> tuple[dict, torch.Tensor]:
        """Teacher-forced loss: the summed negative log-likelihood of every head's target per step."""
        ctx, rows, image, global_view = self.contexts(batch)
        kind = batch["kind"][rows]
        t = rows[1]
        nll = -self.kind_dist(ctx).log_prob(kind) * (t > 0)  # step 0 is always NEXT
        nll = nll - self.correction_dist(ctx).log_prob(batch["correction"][rows]) * (t > 0) * 0.5
        nxt = kind == NEXT
        nll[nxt] -= self.start_log_prob(ctx[nxt], global_view[nxt], image, batch["box"], rows[0][nxt],
                                        batch["canvas"][rows][nxt], batch["start"][rows][nxt])
        act = (kind == LINE) | (kind == ARC)
        a_ctx, a_kind, values = ctx[act], kind[act], batch["values"][rows][act]
        has_turn = batch["has_turn"][rows][act]
        turn = values[:, TURN]
        a_nll = -self.turn_dist(a_ctx, a_kind).log_prob(turn) * has_turn
        line, arc = a_kind == LINE, a_kind == ARC
        a_nll[line] -= self.length_dist(a_ctx[line], a_kind[line], turn[line]).log_prob(values[line, LENGTH])
        arc_args = (a_ctx[arc], a_kind[arc], turn[arc])
        a_nll[arc] -= self.curve_dist(*arc_args).log_prob(values[arc, CURVE]) + self.radius_dist(*arc_args, values[arc, CURVE]).log_prob(values[arc, RADIUS])
        strip = self.strip_features(image, rows[0][act], batch["strip"][rows][act], batch["state"][rows][act][:, 3])
        logits = self.stroke_logits(a_ctx, a_kind, values, strip)
        a_nll = a_nll + F.cross_entropy(logits, batch["stroke"][rows][act], reduction="none")
        nll = nll.index_put((act.nonzero()[:, 0],), a_nll, accumulate=True)
        out = {"kind_logits": self.kind_dist(ctx).logits, "stroke_logits": logits, "rows": rows, "act": act, "ctx": ctx}
        return out, nll.sum() / len(nll)

    def checkpoint(self) -> dict:
        return {"config": asdict(self.config), "model": self.state_dict()}


def normalised(logits: torch.Tensor) -> torch.Tensor:
    """Mixture logits normalised as `Categorical(logits=...)` holds them."""
    return logits - logits.logsumexp(dim=-1, keepdim=True)


def mixture_options(mixture: MixtureSameFamily, n: int, tolerance: float = 0.02) -> tuple[torch.Tensor, torch.Tensor]:
    """The n heaviest component means of a mixture (R rows) with their log-weights, components closer than
    `tolerance` merged into the heavier one: values (R, n), log-weights (R, n)."""
    return top_components(mixture.component_distribution.mean, mixture.mixture_distribution.logits, n, tolerance)


def top_components(mean: torch.Tensor, logits: torch.Tensor, n: int, tolerance: float = 0.02) -> tuple[torch.Tensor, torch.Tensor]:
    """`mixture_options` of a mixture given by its component means (R, K) or (R, K, 2) and normalised logits (R, K)."""
    logw = logits.log_softmax(-1)
    if mean.dim() == logw.dim() + 1:  # Independent 2-D components: no merging
        top = logw.topk(min(n, logw.shape[1]), -1)
        return mean.gather(1, top.indices[..., None].expand(-1, -1, mean.shape[-1])), top.values
    logw, order = logw.sort(-1, descending=True)
    mean = mean.gather(-1, order)
    close = (mean[:, :, None] - mean[:, None, :]).abs() < tolerance
    if int(close.sum()) == close.shape[0] * close.shape[1]:  # no two close: each merges only itself, exactly logw
        top = logw.topk(min(n, mean.shape[1]), -1)
        return mean.gather(-1, top.indices), top.values
    leader = close.float().argmax(-1)
    member = F.one_hot(leader, mean.shape[1]).bool()
    merged = logw[:, :, None].expand_as(member).masked_fill(~member, -math.inf).logsumexp(1)
    top = merged.topk(min(n, mean.shape[1]), -1)
    return mean.gather(-1, top.indices), top.values
