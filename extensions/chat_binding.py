"""Bind sessions to an external conversation (a chat, a ticket) through session tags.

Shows: ``register_integration``/``get_integration`` (a tiny in-memory "chat" integration
other extensions could use), ``wolli.find_sessions({tag: value})``, ``open_session`` and
``create_session`` from a background callback without a ``ctx``, ``set_tags``/``get_tags``,
and ``send_user_message`` on a session found that way.
"""


class FakeChat:
    """Stands in for a real chat client: messages arrive through ``deliver``."""

    def __init__(self, account):
        self.account = account or "default"
        self.listeners = []
        self.sent = []

    def on(self, event, handler):
        self.listeners.append(handler)

    def call(self, action, params):
        if action == "send":
            self.sent.append(params)
        return {"ok": True}

    async def deliver(self, chat_id, text):
        for handler in self.listeners:
            await handler({"chat_id": chat_id, "text": text})


def extension(wolli):
    clients = {}

    def chat_factory(account):
        return clients.setdefault(account or "default", FakeChat(account))

    wolli.register_integration("chat", chat_factory)
    chat = wolli.get_integration("chat")

    async def on_message(message):
        tag = {"chat:id": str(message["chat_id"])}
        found = wolli.find_sessions(tag)
        if found:
            session = await wolli.open_session(found[0].id)
        else:
            session = await wolli.create_session()
            session.set_tags(tag)
        await session.send_user_message(message["text"])

    chat.on("message", on_message)

    def reply_to_chat(event, ctx):
        chat_id = ctx.session.get_tags().get("chat:id")
        if chat_id and event.message.role == "assistant":
            text = "".join(getattr(b, "text", "") for b in event.message.content)
            chat.call("send", {"chat_id": chat_id, "text": text})

    wolli.on("message_end", reply_to_chat)
