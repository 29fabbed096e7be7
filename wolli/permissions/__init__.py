"""Permissions: what the agent may do without asking, and what it may never do.

The pure parts live here, free of sessions and front ends: the modes
(:mod:`.modes`), the rule grammar and its matchers (:mod:`.rules`, :mod:`.shell_words`,
:mod:`.bash_rules`, :mod:`.path_rules`), the decision for one tool call (:mod:`.policy`),
the narrowest rule that covers a call (:mod:`.suggest`), the typed question a front end
asks the user (:mod:`.prompt`) and where rules are kept (:mod:`.store`). The runtime
applies them to every tool call through the ``tool_call`` seam (``docs/permissions.md``).
"""
