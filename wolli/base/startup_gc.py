"""The cyclic garbage collector held off while Wolli starts.

Start-up creates tens of thousands of objects that live as long as the process (modules,
classes, dataclass methods, pydantic schemas, the session's entries). With the collector on,
their allocations trigger ~80 collections that walk the growing heap and free nothing
(measured: ~44 ms of the print-mode import chain, 10 % of its CPU). ``pause`` turns the
collector off before the heavy imports; ``resume``, once the session is up, moves everything
alive then to the oldest generation (``gc.freeze`` then ``gc.unfreeze``), so young
collections skip it while a full one can still free a cycle start-up left behind, and turns
the collector back on. Only the caller that found it on turns it back on.
"""

from __future__ import annotations

import gc

_paused = False


def pause() -> None:
    global _paused
    if gc.isenabled():
        gc.disable()
        _paused = True


def resume() -> None:
    """Age what start-up built and collect as usual from here on (idempotent)."""
    global _paused
    if _paused:
        _paused = False
        if gc.get_freeze_count() == 0:  # objects frozen by someone else stay frozen
            gc.freeze()
            gc.unfreeze()
        gc.enable()
