"""The public name of the RPC client: ``from wolli.rpc_client import RpcClient``.

The client lives beside the server it talks to (:mod:`wolli.modes.rpc.client`); this name
stays for programs that drive Wolli, and imports nothing else of the package.
"""

from .modes.rpc.client import LATER, RpcClient, RpcClosed, RpcError

__all__ = ["LATER", "RpcClient", "RpcClosed", "RpcError"]
