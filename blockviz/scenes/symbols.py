"""The scenes' typeset names: the one mapping of :mod:`blockviz.symbols`, which the figures read too."""

from blockviz.symbols import (
    ACTIVATED,
    FIELD_SYMBOLS,
    POST_NORM_SYMBOLS,
    bare,
    indexed,
    parameter_symbol,
    script,
    symbol,
)

__all__ = ["symbol", "parameter_symbol", "bare", "indexed", "script", "FIELD_SYMBOLS", "POST_NORM_SYMBOLS", "ACTIVATED"]
