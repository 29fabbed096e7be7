"""Trim old tool output from what the model is sent (the session file keeps everything).

Shows: the ``context`` event returning ``{"messages": [...]}``: an ephemeral rewrite of one
request. Tool results older than the last ``KEEP`` get their text cut to a short stub.
"""

KEEP = 3
STUB_CHARS = 200


def extension(wolli):
    def trim(event, ctx):
        results = [i for i, m in enumerate(event.messages) if getattr(m, "role", None) == "toolResult"]
        old = results[:-KEEP] if len(results) > KEEP else []
        if not old:
            return None
        for index in old:
            message = event.messages[index]
            for block in message.content:
                if getattr(block, "type", None) == "text" and len(block.text) > STUB_CHARS:
                    block.text = block.text[:STUB_CHARS] + f"\n[... {len(block.text) - STUB_CHARS} chars trimmed]"
        return {"messages": event.messages}  # event.messages is a copy: changing it is safe

    wolli.on("context", trim)
