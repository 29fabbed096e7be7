"""The runtime: one agent host and its live sessions, and the event stream clients observe.

Rooms, top to bottom (docs/architecture.md §2): ``startup/``, ``host/``, ``live/``,
``safety/``, ``handlers/``, ``resources/``, then :mod:`.events` and :mod:`.event_records`.
"""
