"""The one module that imports the ``agent-client-protocol`` package (module ``acp``).

Everything else in ``modes/acp`` takes the protocol's types and helpers from here, so a
change of the SDK's layout (it moved modules between minor versions) is met in one place.
"""

from __future__ import annotations

from typing import TypeAlias

from acp import PROTOCOL_VERSION, RequestError, schema
from acp.agent.connection import AgentSideConnection
from acp.interfaces import Client

# What ``session/update`` carries (the union the SDK's ``Client.session_update`` takes).
SessionUpdate: TypeAlias = (
    schema.UserMessageChunk | schema.AgentMessageChunk | schema.AgentThoughtChunk | schema.ToolCallStart
    | schema.ToolCallProgress | schema.AgentPlanUpdate | schema.AgentPlanContentUpdate
    | schema.AgentPlanRemovedUpdate | schema.AvailableCommandsUpdate | schema.CurrentModeUpdate
    | schema.ConfigOptionUpdate | schema.SessionInfoUpdate | schema.UsageUpdate
)
# What a tool call shows besides its title: text, a diff, or a terminal.
ToolCallContent: TypeAlias = (
    schema.ContentToolCallContent | schema.FileEditToolCallContent | schema.TerminalToolCallContent
)

# A session's configuration option as the responses carry it.
ConfigOption: TypeAlias = schema.SessionConfigOptionSelect | schema.SessionConfigOptionBoolean

__all__ = ["PROTOCOL_VERSION", "AgentSideConnection", "Client", "ConfigOption", "RequestError", "SessionUpdate", "ToolCallContent",
           "schema"]
