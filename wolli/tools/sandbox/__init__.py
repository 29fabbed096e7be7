"""The optional sandbox for shell commands (Linux, bubblewrap): one more execution wrapper.

- :mod:`.bwrap`: is ``bwrap`` usable here, and the command line that confines a command
  (the project writable, everything else read-only, its own process, IPC and network
  namespaces, no capabilities, no nested user namespaces);
- :mod:`.proxy`: the loopback HTTP(S) proxy (``CONNECT`` and plain HTTP) that lets a
  confined command reach the domains allowed, and asks about the others;
- ``bridge.py``: run inside the sandbox (plain Python, no Wolli imports): it carries the
  proxy into the command's network namespace and runs the command;
- :mod:`.environment`: the :class:`~wolli.tools.environment.Environment` whose ``exec``
  runs every command that way (the ``bash`` tool and ``!cmd`` alike).

What it protects and what not, per platform: ``docs/permissions.md`` ("The sandbox").
"""
