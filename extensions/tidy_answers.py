"""Tidy the assistant's final text: no trailing whitespace on lines, one final newline.

Shows: ``message_end`` returning ``{"message": ...}`` with the same role (a different role
is refused); what the handler returns is what the session file stores.
"""


def extension(wolli):
    def tidy(event, ctx):
        message = event.message
        if message.role != "assistant":
            return None
        copy = message.model_copy(deep=True)
        changed = False
        for block in copy.content:
            if getattr(block, "type", None) == "text":
                cleaned = "\n".join(line.rstrip() for line in block.text.splitlines()).strip("\n")
                if cleaned != block.text:
                    block.text = cleaned
                    changed = True
        return {"message": copy} if changed else None

    wolli.on("message_end", tidy)
