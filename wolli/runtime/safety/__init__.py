"""The safety net at run time: permission modes and the gate every tool call passes
(:mod:`.permissions`, :mod:`.gate`), what extensions hold of it (:mod:`.handle`), file
checkpoints and rewinds (:mod:`.checkpointing`, :mod:`.rewind`). The pure parts live in
:mod:`wolli.permissions` and :mod:`wolli.session.checkpoints`."""
