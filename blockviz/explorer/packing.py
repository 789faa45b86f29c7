"""Numbers packed for the explorer page: exact, and smaller than their base64 bytes."""

from __future__ import annotations

import base64
import zlib

import numpy as np


def packed(data: bytes, itemsize: int) -> str:
    """Little-endian numbers of ``itemsize`` bytes, packed for the page: their bytes regrouped by
    place (every number's first byte, then every second byte, …: the sign-and-exponent bytes of
    trained weights repeat, the low mantissa bytes do not), raw-deflated (RFC 1951, which the
    browser's ``DecompressionStream("deflate-raw")`` reads) and base64: as exact, and 0.85–0.9
    of the plain base64 of a MiniLM layer's tensors and weight columns.

    >>> import numpy as np
    >>> len(packed(np.zeros(1000, "<f4").tobytes(), 4)) < 100
    True
    """
    planes = np.frombuffer(data, np.uint8).reshape(-1, itemsize).T.tobytes()
    deflate = zlib.compressobj(9, zlib.DEFLATED, -15)
    return base64.b64encode(deflate.compress(planes) + deflate.flush()).decode("ascii")
