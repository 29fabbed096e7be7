"""The ``on_payload`` seam: callers see (and may replace) the exact request body.

Kept apart from :mod:`.http` so providers that never touch the network (``faux``) call the
same hook without importing httpx.
"""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING, Any

from .types import StreamOptions

if TYPE_CHECKING:
    from .types import Model


async def apply_payload_hook(payload: dict[str, Any], model: Model, options: StreamOptions) -> dict[str, Any]:
    """``options.on_payload(payload, model)`` (sync or async): a returned dict replaces the payload."""
    if options.on_payload is None:
        return payload
    result = options.on_payload(payload, model)
    if inspect.isawaitable(result):
        result = await result
    return result if isinstance(result, dict) else payload
