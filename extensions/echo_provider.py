"""A custom model provider: "echo/parrot" answers by repeating the last user message.

Shows: ``register_provider`` with a ``stream`` function in the event-dict form
(``fn(model, context, options)`` yielding ``text_delta``/``done`` dicts), a model made
usable with an ``apiKey`` in the config, and ``/echo-off`` calling ``unregister_provider``.
Select it with ``--model echo/parrot`` (or ``-e`` this file and ``--model echo/parrot``).
"""


async def parrot(model, context, options):
    last = next((m for m in reversed(context.messages) if m.role == "user"), None)
    text = last.content if last is not None and isinstance(last.content, str) else "..."
    for word in text.split(" "):
        yield {"type": "text_delta", "content_index": 0, "delta": word + " "}
    yield {"type": "done", "reason": "stop", "usage": {"input": len(text), "output": len(text)}}


def extension(wolli):
    wolli.register_provider("echo", {
        "api": "echo-api",
        "baseUrl": "http://echo.invalid",
        "apiKey": "not-needed",
        "models": [{"id": "parrot", "name": "Parrot", "contextWindow": 8000, "maxTokens": 1000}],
        "stream": parrot,
    })
    wolli.register_command("echo-off", handler=lambda args, ctx: wolli.unregister_provider("echo"),
                           description="Remove the echo provider")
