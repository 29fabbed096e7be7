"""The one module that imports the ``agent-client-protocol`` package (module ``acp``).

Everything else in ``modes/acp`` takes the protocol's types and helpers from here, so a
change of the SDK's layout (it moved modules between minor versions) is met in one place.
"""

from __future__ import annotations

from acp import PROTOCOL_VERSION, RequestError, schema
from acp.agent.connection import AgentSideConnection

__all__ = ["PROTOCOL_VERSION", "AgentSideConnection", "RequestError", "schema"]
