"""Custom compaction: a bullet list of what happened instead of a model-written summary.

Shows: ``session_before_compact`` answering ``{"compaction": {summary, first_kept_entry_id,
tokens_before}}`` (no model call at all), or ``{"cancel": True}`` when the setting
``customCompaction.enabled`` is false; the first answer wins.
"""


def extension(wolli):
    def compact(event, ctx):
        if wolli.settings.get("customCompaction.enabled", True) is False:
            return {"cancel": True}
        prep = event.preparation
        lines = []
        for message in prep.messages_to_summarize:
            role = getattr(message, "role", "")
            if role == "user":
                text = message.content if isinstance(message.content, str) else " ".join(
                    getattr(b, "text", "") for b in message.content)
                lines.append(f"- user asked: {text.strip()[:120]}")
            elif role == "toolResult":
                lines.append(f"- ran {message.tool_name}")
        summary = "## Earlier in this session\n" + ("\n".join(lines) or "- (nothing to report)")
        return {"compaction": {"summary": summary, "first_kept_entry_id": prep.first_kept_entry_id,
                               "tokens_before": prep.tokens_before}}

    wolli.on("session_before_compact", compact)
