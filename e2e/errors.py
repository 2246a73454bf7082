"""How the e2e drivers report an error a client threw: one line with its class, message and,
for a JSON-RPC error, its code and data; exception groups are unwrapped to the errors inside.
"""

from __future__ import annotations

import json

from mcp.shared.exceptions import MCPError


def leaves(error: BaseException) -> list[BaseException]:
    """The errors inside (nested) exception groups, or the error itself."""
    if isinstance(error, BaseExceptionGroup):
        return [leaf for e in error.exceptions for leaf in leaves(e)]
    return [error]


def describe(error: BaseException) -> str:
    """A thrown error as one line: its class and message, and the JSON-RPC code and data."""
    if isinstance(error, BaseExceptionGroup):
        return "; ".join(describe(e) for e in leaves(error))
    line = f"{type(error).__name__}: {error}"
    if isinstance(error, MCPError):
        line += f" (code {error.code})"
        if error.error.data is not None:
            line += f" data {json.dumps(error.error.data)}"
    return line
