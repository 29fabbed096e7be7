"""Configuration on disk: paths, settings, keybindings and key names, themes, file locks.

Every reader is bounded and reports a malformed file as one line naming the file and the
place (:mod:`.errors`), never a traceback. Files: docs/agent-home.md, docs/settings.md.
"""
