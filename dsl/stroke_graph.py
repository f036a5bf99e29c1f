"""The stroke graph of one shape: junctions, crossings, connected parts and the faces of the drawing.

Nodes are the places where strokes start, end, turn, touch or cross (points closer than the tolerance are
one node); edges are the pieces of actions between consecutive nodes along each action, kept with their
exact geometry. The graph is planar by construction, so the bounded faces of its embedding are the
regions a person sees enclosed by strokes; `Face.sides` describes each outline as straight sides and arcs
with the corners between them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import networkx as nx
import numpy as np
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components
from scipy.spatial import cKDTree

from dsl.geometry import Piece, meeting_points, polygon_area, wrap_degrees
from dsl.settings import CORNER_DEGREES, MAX_SLIVER_ROUNDS, SLIVER_SIZE


@dataclass(frozen=True, slots=True)
class Edge:
    """The stretch of piece `piece` between parameters t0 < t1, from node u to node v."""

    u: int
    v: int
    piece: int
    t0: float
    t1: float


@dataclass(slots=True)
class Side:
    """A maximal straight side or arc of a face outline (consecutive collinear / co-circular edges)."""

    is_line: bool
    length: float
    centre: np.ndarray | None
    radius: float
    start: np.ndarray
    end: np.ndarray


@dataclass(slots=True)
class Face:
    """A bounded face: outline polygon (counter-clockwise), sides, and the turn (degrees, left positive)
    at the start of each side."""

    polygon: np.ndarray
    area: float
    sides: list[Side] = field(default_factory=list)
    turns: list[float] = field(default_factory=list)
    half_edges: list[tuple[int, int]] = field(default_factory=list)


class StrokeGraph:
    """Junction/crossing graph of a list of pieces drawn by one turtle (in drawing order)."""

    def __init__(self, pieces: list[Piece], tol: float) -> None:
        self.pieces = pieces
        self.tol = tol
        events, pair_events = self._events()
        points = np.array([p for _, _, p in events])
        self.nodes, node_of = self._cluster(list(points))
        for round_ in range(MAX_SLIVER_ROUNDS + 1):
            self._build(events, node_of)
            cycles = self._cycles()
            slivers = self._sliver_cycles(cycles) if round_ < MAX_SLIVER_ROUNDS else []
            if not slivers:
                break
            node_of = self._merge_nodes(node_of, slivers, points)
        self.crossings = self._crossings(pair_events, node_of)
        self.faces = [face for face in map(self._face, cycles) if face is not None]

    def _build(self, events: list[tuple[int, float, np.ndarray]], node_of: np.ndarray) -> None:
        self.edges = self._without_spurs(self._split(events, node_of))
        self.graph = nx.MultiGraph()
        self.graph.add_nodes_from(sorted({e.u for e in self.edges} | {e.v for e in self.edges}))
        for k, e in enumerate(self.edges):
            self.graph.add_edge(e.u, e.v, key=k)

    def _sliver_cycles(self, cycles: list[list[tuple[int, int]]]) -> list[set[int]]:
        """Nodes of the enclosed cycles too small to show: every point of the outline within SLIVER_SIZE
        tolerances of every other (the pen fills them; e.g. strokes meant to meet at one point that,
        with rounded values, pass each other and cut a tiny triangle)."""
        found = []
        for cycle in cycles:
            nodes = {self.edges[k].u for k, _ in cycle} | {self.edges[k].v for k, _ in cycle}
            if len(nodes) < 2:
                continue
            outline = np.concatenate([self.half_edge_points(h) for h in cycle])
            span = outline.max(axis=0) - outline.min(axis=0)
            if float(np.hypot(*span)) <= SLIVER_SIZE * self.tol:
                found.append(nodes)
        return found

    def _merge_nodes(self, node_of: np.ndarray, groups: list[set[int]], points: np.ndarray) -> np.ndarray:
        """Node labels with every group merged into one node, placed at the mean of its events."""
        label = np.arange(len(self.nodes))
        for group in groups:
            target = min(label[list(group)])
            for v in group:
                label[label == label[v]] = target
        merged = label[node_of]
        self.nodes = np.array([points[merged == k].mean(axis=0) if np.any(merged == k) else self.nodes[k]
                               for k in range(len(self.nodes))])
        return merged

    def _events(self) -> tuple[list[tuple[int, float, np.ndarray]], list[tuple[int, int, int]]]:
        """(piece, parameter, point) for every end and every meeting; meetings also as (i, j, event index)."""
        events = []
        for i, p in enumerate(self.pieces):
            events += [(i, 0.0, p.start), (i, 1.0, p.end)]
        pairs = []
        for i in range(len(self.pieces)):
            for j in range(i + 1, len(self.pieces)):
                for ta, tb, point in meeting_points(self.pieces[i], self.pieces[j], self.tol):
                    pairs.append((i, j, len(events)))
                    events += [(i, ta, point), (j, tb, point)]
        return events, pairs

    def _cluster(self, points: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        pts = np.array(points)
        close = np.array(sorted(cKDTree(pts).query_pairs(self.tol)), dtype=np.int64).reshape(-1, 2)
        adjacency = coo_matrix((np.ones(len(close)), (close[:, 0], close[:, 1])), shape=(len(pts), len(pts)))
        count, labels = connected_components(adjacency, directed=False)
        nodes = np.array([pts[labels == k].mean(axis=0) for k in range(count)])
        return nodes, labels

    def _split(self, events: list[tuple[int, float, np.ndarray]], node_of: np.ndarray) -> list[Edge]:
        """Cut every piece at its events; drop repeated edges (retraced strokes).

        Marks of one node that follow each other closely along a piece form a run; an edge leaves a run
        at its last mark and reaches the next run at its first, so the cut does not depend on the
        direction in which the piece was drawn."""
        per_piece: dict[int, list[tuple[float, int]]] = {}
        for (i, t, _), node in zip(events, node_of):
            per_piece.setdefault(i, []).append((t, int(node)))
        candidates = []
        for i, marks in sorted(per_piece.items()):
            piece = self.pieces[i]
            for (t0, u), (t1, v) in self._runs(sorted(marks), piece.length):
                candidates.append(Edge(u, v, i, t0, t1))
        # Of edges that coincide (same ends, midpoints within 2 tol), keep one, the same whatever the
        # drawing order: straight before curved, then the shorter.
        candidates.sort(key=self._edge_preference)
        edges: list[Edge] = []
        seen: dict[tuple[int, int], list[np.ndarray]] = {}
        for e in candidates:
            mid = self.pieces[e.piece].point(0.5 * (e.t0 + e.t1))
            twins = seen.setdefault((min(e.u, e.v), max(e.u, e.v)), [])
            if all(np.linalg.norm(mid - m) > 2 * self.tol for m in twins):
                twins.append(mid)
                edges.append(e)
        return edges

    def _edge_preference(self, e: Edge) -> tuple[bool, float]:
        piece = self.pieces[e.piece]
        return (not piece.is_line, round((e.t1 - e.t0) * piece.length / self.tol, 3))

    def _without_spurs(self, edges: list[Edge]) -> list[Edge]:
        """Drop loose ends shorter than twice the tolerance that stick out of a junction: a stroke that
        overshoots the point where it meets another by less than a pen width does not show a spur."""
        degree: dict[int, int] = {}
        for e in edges:
            degree[e.u] = degree.get(e.u, 0) + 1
            degree[e.v] = degree.get(e.v, 0) + 1
        kept = []
        for e in edges:
            short = (e.t1 - e.t0) * self.pieces[e.piece].length < 2 * self.tol
            spur = min(degree[e.u], degree[e.v]) == 1 and max(degree[e.u], degree[e.v]) >= 3
            if not (short and spur):
                kept.append(e)
        return kept

    def _runs(self, marks: list[tuple[float, int]], length: float) -> list[tuple[tuple[float, int], ...]]:
        """Consecutive (end of run, start of next run) pairs along one piece."""
        runs = [[marks[0][0], marks[0][0], marks[0][1]]]  # first t, last t, node
        for t, node in marks[1:]:
            if node == runs[-1][2] and (t - runs[-1][1]) * length < 3 * self.tol:
                runs[-1][1] = t
            else:
                runs.append([t, t, node])
        return [((a[1], a[2]), (b[0], b[2])) for a, b in zip(runs[:-1], runs[1:])]

    def _crossings(self, pair_events: list[tuple[int, int, int]], node_of: np.ndarray) -> list[int]:
        """Nodes where two pieces pass through each other (interior of both, transversal)."""
        found = set()
        for i, j, event in pair_events:
            node = int(node_of[event])
            if node not in found and self._transversal(i, j, node):
                found.add(node)
        return sorted(found)

    def _interior_t(self, i: int, node: int) -> float | None:
        p = self.pieces[i]
        t = min(max(p.parameter(self.nodes[node]), 0.0), 1.0)
        if t * p.length <= self.tol or (1 - t) * p.length <= self.tol:
            return None
        return t

    def _transversal(self, i: int, j: int, node: int) -> bool:
        ti, tj = self._interior_t(i, node), self._interior_t(j, node)
        if ti is None or tj is None:
            return False
        diff = wrap_degrees(math.degrees(self.pieces[i].direction(ti) - self.pieces[j].direction(tj)))
        return CORNER_DEGREES < abs(diff) < 180.0 - CORNER_DEGREES

    def _leaving_angle(self, edge: Edge, forward: bool) -> float:
        """Direction in which the half-edge leaves its origin, taken a short way along it."""
        piece = self.pieces[edge.piece]
        span = (edge.t1 - edge.t0) * piece.length
        step = min(0.25 * span, 3 * self.tol) / max(piece.length, 1e-12)
        origin_t, towards = (edge.t0, edge.t0 + step) if forward else (edge.t1, edge.t1 - step)
        d = piece.point(towards) - piece.point(origin_t)
        return math.atan2(d[1], d[0])

    def _cycles(self) -> list[list[tuple[int, int]]]:
        """Every face boundary as a cycle of half-edges, walking half-edges with the face on the left
        (counter-clockwise); the unbounded faces are among them (`_face` leaves them out)."""
        outgoing: dict[int, list[tuple[float, int, int]]] = {}
        for k, e in enumerate(self.edges):
            outgoing.setdefault(e.u, []).append((self._leaving_angle(e, True), k, 1))
            outgoing.setdefault(e.v, []).append((self._leaving_angle(e, False), k, 0))
        position = {}
        for node, items in outgoing.items():
            items.sort()
            for idx, (_, k, fwd) in enumerate(items):
                position[(k, fwd)] = (node, idx)
        visited, cycles = set(), []
        for start in position:
            if start in visited:
                continue
            cycle, h = [], start
            while h not in visited:
                visited.add(h)
                cycle.append(h)
                k, fwd = h
                e = self.edges[k]
                twin_node, twin_idx = position[(k, 1 - fwd)]
                items = outgoing[twin_node]
                _, nk, nfwd = items[(twin_idx - 1) % len(items)]
                h = (nk, nfwd)
            cycles.append(cycle)
        return cycles

    def half_edge_points(self, h: tuple[int, int]) -> np.ndarray:
        k, fwd = h
        e = self.edges[k]
        pts = self.pieces[e.piece].sample(e.t0, e.t1)
        return pts if fwd else pts[::-1]

    def _face(self, cycle: list[tuple[int, int]]) -> Face | None:
        polygon = np.concatenate([self.half_edge_points(h)[:-1] for h in cycle])
        if len(polygon) < 3:
            return None
        area = polygon_area(polygon)
        if area <= self.tol * self.tol:
            return None
        face = Face(polygon, area, half_edges=cycle)
        face.sides, face.turns = self._sides(cycle)
        return face

    def _half_edge_dirs(self, h: tuple[int, int]) -> tuple[float, float]:
        k, fwd = h
        e = self.edges[k]
        piece = self.pieces[e.piece]
        a, b = piece.direction(e.t0), piece.direction(e.t1)
        return (a, b) if fwd else (b + math.pi, a + math.pi)

    def _sides(self, cycle: list[tuple[int, int]]) -> tuple[list[Side], list[float]]:
        """Merge consecutive edges into sides; record the turn before each side (degrees)."""
        turns = []
        for idx, h in enumerate(cycle):
            _, end_dir = self._half_edge_dirs(cycle[idx - 1])
            start_dir, _ = self._half_edge_dirs(h)
            turns.append(wrap_degrees(math.degrees(start_dir - end_dir)))
        corner_at = [
            abs(t) >= CORNER_DEGREES or not self._same_carrier(cycle[i - 1], cycle[i]) for i, t in enumerate(turns)
        ]
        if not any(corner_at):
            return [self._side_of(cycle)], []
        first = corner_at.index(True)
        order = cycle[first:] + cycle[:first]
        flags = corner_at[first:] + corner_at[:first]
        kept = turns[first:] + turns[:first]
        sides, side_turns, run = [], [], []
        for h, corner, turn in zip(order, flags, kept):
            if corner and run:
                sides.append(self._side_of(run))
                run = []
            if corner:
                side_turns.append(turn)
            run.append(h)
        sides.append(self._side_of(run))
        return sides, side_turns

    def _same_carrier(self, h1: tuple[int, int], h2: tuple[int, int]) -> bool:
        p, q = self.pieces[self.edges[h1[0]].piece], self.pieces[self.edges[h2[0]].piece]
        if p.is_line != q.is_line:
            return False
        if p.is_line:
            return True
        return bool(np.linalg.norm(p.centre - q.centre) < 2 * self.tol and abs(p.radius - q.radius) < 2 * self.tol)

    def _side_of(self, run: list[tuple[int, int]]) -> Side:
        first = self.pieces[self.edges[run[0][0]].piece]
        pts = np.concatenate([self.half_edge_points(h) for h in run])
        length = float(np.linalg.norm(np.diff(pts, axis=0), axis=1).sum())
        if first.is_line:
            return Side(True, length, None, 0.0, pts[0], pts[-1])
        return Side(False, length, first.centre, first.radius, pts[0], pts[-1])

    def components(self) -> int:
        return nx.number_connected_components(self.graph)

    def parts(self) -> int:
        """Perceived parts: each enclosed region is a part, and so is each connected group of strokes
        that encloses nothing (an open curve)."""
        component_of = {v: k for k, nodes in enumerate(nx.connected_components(self.graph)) for v in nodes}
        regions = [0] * (max(component_of.values(), default=-1) + 1)
        for face in self.faces:
            regions[component_of[self.edges[face.half_edges[0][0]].u]] += 1
        return sum(max(1, r) for r in regions)

    def sample_uniform(self, count: int = 240) -> np.ndarray:
        """About `count` points spread evenly by length over the edges (each drawn place counted once,
        however often the turtle went over it)."""
        lengths = [(e.t1 - e.t0) * self.pieces[e.piece].length for e in self.edges]
        total = sum(lengths) or 1.0
        points = []
        for e, length in zip(self.edges, lengths):
            n = max(2, int(round(count * length / total)) + 1)
            points.append(self.pieces[e.piece].points(np.linspace(e.t0, e.t1, n)))
        return np.concatenate(points)

    def degree(self, node: int) -> int:
        return int(self.graph.degree(node))

    def junctions(self) -> list[int]:
        """Nodes where more than two stroke ends meet: crossings, touching corners, T-junctions."""
        return [v for v in self.graph.nodes if self.graph.degree(v) >= 3]

    def through_junctions(self) -> list[int]:
        """Junctions where a stroke goes on through the meeting point (a line crossing or touching
        another): two of the edges there leave in opposite directions along the same line or circle.
        Figures that only share corners, or curves meeting in an S, have none."""
        found = []
        for v in self.junctions():
            leaving = [(self._leaving(e, v), e) for e in self.edges if v in (e.u, e.v)]
            if any(
                abs(wrap_degrees(math.degrees(a - b))) >= 180.0 - CORNER_DEGREES and self._same_circle(e, f)
                for i, (a, e) in enumerate(leaving)
                for b, f in leaving[i + 1 :]
            ):
                found.append(v)
        return found

    def _same_circle(self, e: Edge, f: Edge) -> bool:
        p, q = self.pieces[e.piece], self.pieces[f.piece]
        if p.is_line or q.is_line:
            return p.is_line and q.is_line
        return bool(np.linalg.norm(p.centre - q.centre) < 2 * self.tol and abs(p.radius - q.radius) < 2 * self.tol)

    def free_ends(self) -> list[int]:
        return [v for v in self.graph.nodes if self.graph.degree(v) == 1]

    def tangents_at(self, node: int) -> list[float]:
        """Direction (radians) in which each edge leaves `node` (a self-loop leaves twice)."""
        directions = []
        for e in self.edges:
            piece = self.pieces[e.piece]
            if e.u == node:
                directions.append(piece.direction(e.t0))
            if e.v == node:
                directions.append(piece.direction(e.t1) + math.pi)
        return directions

    def node_angles(self) -> list[tuple[int, float]]:
        """(node, angle in degrees) for every pair of strokes leaving a node that are not straight through
        (angle below 180 - CORNER_DEGREES): the corners a person sees where strokes meet."""
        found = []
        for v in self.graph.nodes:
            directions = self.tangents_at(v)
            for i in range(len(directions)):
                for j in range(i + 1, len(directions)):
                    angle = abs(wrap_degrees(math.degrees(directions[i] - directions[j])))
                    if angle < 180.0 - CORNER_DEGREES:
                        found.append((v, angle))
        return found

    def straight_edges(self) -> int:
        """Straight stretches between nodes where strokes end, turn or meet: line edges, joined through
        nodes of degree 2 where the line goes straight on."""
        lines = [k for k, e in enumerate(self.edges) if self.pieces[e.piece].is_line]
        joins = 0
        for v in self.graph.nodes:
            incident = [k for k in lines if v in (self.edges[k].u, self.edges[k].v)]
            if self.graph.degree(v) == 2 and len(incident) == 2:
                a, b = (self._leaving(self.edges[k], v) for k in incident)
                if abs(wrap_degrees(math.degrees(a - b))) >= 180.0 - CORNER_DEGREES:
                    joins += 1
        return len(lines) - joins

    def _leaving(self, edge: Edge, node: int) -> float:
        piece = self.pieces[edge.piece]
        return piece.direction(edge.t0) if edge.u == node else piece.direction(edge.t1) + math.pi
