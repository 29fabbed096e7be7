"""File checkpoints: what files held before the agent changed them, and putting it back.

- :mod:`.blobs`: content-addressed blobs beside the session files (``<folder>/blobs/``);
- :mod:`.records`: the ``checkpoint`` entries' file records, and a cache of file hashes;
- :mod:`.git_capture`: what a shell command changed in a git work tree (``git status``
  before and after);
- :mod:`.plan`: over a branch of the session tree, the points one can rewind to and what a
  rewind restores (and which files changed outside Wolli since);
- :mod:`.restore`: writing the files back all at once or not at all, even across a crash.

The runtime decides when to take checkpoints (``wolli.runtime.safety.checkpointing``);
``docs/checkpoints.md`` says what is and is not captured.
"""
