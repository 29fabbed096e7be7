"""Stored sessions: append-only JSONL trees, the context a leaf sends, compaction, export.

A *session* here is the file and its entry tree (:mod:`.manager`, :mod:`.store`); the
open, running form of one is :class:`wolli.runtime.live.live_session.LiveSession`.
Checkpoints of files the agent changed live in :mod:`.checkpoints`. Format: docs/sessions.md.
"""
