"""The floor every layer stands on: reading files that may be hostile (regular files only,
never past a cap), blocking calls in daemon threads, text made safe to show. Imports nothing
of wolli."""
