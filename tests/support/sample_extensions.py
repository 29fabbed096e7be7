"""Extension sources more than one client's tests load (each client shows their effect its own way)."""

# Replaces every finished assistant message with "[redacted]" (a message_end replacement).
REDACTOR = """
def extension(wolli):
    def redact(event, ctx):
        if event.message.role == "assistant":
            return {"message": event.message.model_copy(update={"content": [{"type": "text", "text": "[redacted]"}]})}
        return None
    wolli.on("message_end", redact)
"""
