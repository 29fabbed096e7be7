"""The built-in tools (read, write, edit, bash, grep, find, ls) and what they stand on.

Every file and process operation goes through the Environment seam (:mod:`.environment`),
so an editor or a sandbox can stand in for the host machine; processes Wolli starts are
supervised (:mod:`.supervisor`) and die with it. Caps per tool: docs/tools.md.
"""
