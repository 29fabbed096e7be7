"""``--mode rpc``: JSONL commands on stdin, events and responses on stdout.

:mod:`.server` runs the protocol, :mod:`.client` is its Python client (also importable as
``wolli.rpc_client``). The protocol: docs/rpc.md.
"""
