"""Tag every provider request with metadata (for a proxy's cost tracking).

Shows: ``before_provider_request`` returning a changed payload (the raw JSON body the
provider is sent) and ``wolli.cwd``; the change is made on a copy.
"""

import os


def extension(wolli):
    def tag(event, ctx):
        payload = dict(event.payload)
        metadata = dict(payload.get("metadata") or {})
        metadata["wolli_project"] = os.path.basename(wolli.cwd) or "/"
        metadata["wolli_session"] = ctx.session.id
        payload["metadata"] = metadata
        return payload

    wolli.on("before_provider_request", tag)
