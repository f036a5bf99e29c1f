"""Decoding for several problems at once: a problem's decode waits for the others', then one call decodes all.

    rendezvous = Rendezvous(decode_requests, clients=K)    # K problems solved side by side, one thread each
    proposals = rendezvous.decode(k, images)                # in problem k's thread; blocks until the batch ran
    rendezvous.leave(k)                                     # problem k is done (always: in a finally)

A batch runs when every problem still running is waiting in `decode`, so its requests are the r-th of every
live problem, in problem order: the batches depend on the problems only, never on timing (the readings do
not change from one run to the next). `decode_requests` turns the list of requests (each a list of images)
into the list of their proposals; `one_call` makes it one batched call over all their images, the form for
a GPU (`solver.reading.grouped`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import numpy as np


def one_call(decode: Callable[[list[np.ndarray]], list]) -> Callable[[list[list]], list[list]]:
    """`decode_requests` that decodes every request's images in one call of `decode` and splits the result."""

    def decode_requests(requests: list[list]) -> list[list]:
        decoded = decode([image for request in requests for image in request])
        out, start = [], 0
        for request in requests:
            out.append(decoded[start : start + len(request)])
            start += len(request)
        return out

    return decode_requests


class Rendezvous:
    """Collects the decode requests of `clients` problems and runs them together (see the module docstring)."""

    def __init__(self, decode_requests: Callable[[list[list]], list[list]], clients: int) -> None:
        self._decode_requests = decode_requests
        self._live = set(range(clients))
        self._pending: dict[int, list] = {}  # client -> its images, until its batch runs
        self._done: dict[int, object] = {}  # client -> its proposals, or the exception its batch raised
        self._lock = threading.Condition()
        self.batches: list[list[int]] = []  # per batch run: the number of images of each request in it

    def decode(self, client: int, images: list[np.ndarray]) -> list:
        """Client `client`'s proposals for `images`, decoded in one batch with the other live clients' requests."""
        with self._lock:
            if client not in self._live:
                raise RuntimeError(f"decode from client {client}, which has left")
            self._pending[client] = list(images)
            self._run_if_all_wait()
            self._lock.wait_for(lambda: client in self._done)
            result = self._done.pop(client)
        if isinstance(result, BaseException):
            raise result
        return result

    def leave(self, client: int) -> None:
        """Client `client` asks for nothing more: the others no longer wait for it."""
        with self._lock:
            self._live.discard(client)
            self._run_if_all_wait()

    def _run_if_all_wait(self) -> None:
        if not self._pending or set(self._pending) != self._live:
            return
        clients = sorted(self._pending)
        requests = [self._pending[c] for c in clients]
        self.batches.append([len(r) for r in requests])
        try:
            decoded = self._decode_requests(requests)
            if len(decoded) != len(requests):
                raise RuntimeError(f"decoding gave {len(decoded)} results for {len(requests)} requests")
        except Exception as error:  # every problem of the batch sees the failure, as its own decode would
            decoded = [error] * len(requests)
        self._done.update(zip(clients, decoded))
        self._pending.clear()
        self._lock.notify_all()
