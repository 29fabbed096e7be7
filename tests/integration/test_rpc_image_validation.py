"""RPC prompts no provider can take (bad images, an empty message) are refused at the door, not stored.

Found by hand: ``prompt`` with ``images: [{"data": "!!!notbase64", "mimeType": "image/png"}]``
(or ``"mimeType": "text/html"``) was accepted, written into the session and sent; a real
provider answers such a request with a 400, and since the image stays in the context every
later prompt of that session fails the same way.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.rpc import MODEL, start_client, write_models
from wolli.rpc_client import RpcError

PNG_1X1 = ("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")


@pytest.fixture
def models(wolli_home: Path, loopback) -> None:
    write_models(wolli_home, loopback.url + "/v1")


@pytest.mark.parametrize(("image", "error"), [
    ({"type": "image", "data": "!!!not base64", "mimeType": "image/png"}, "images[0]: 'data' is not valid base64"),
    ({"type": "image", "data": PNG_1X1, "mimeType": "text/html"},
     "images[0]: 'mimeType' must be one of image/gif, image/jpeg, image/png, image/webp, not 'text/html'"),
])
def test_a_bad_image_is_refused_and_nothing_is_sent(project, wolli_home, loopback, models, image, error):
    with start_client(project, *MODEL) as client:
        with pytest.raises(RpcError) as refused:
            client.request({"type": "prompt", "message": "look", "images": [image]})
        assert str(refused.value).endswith(f"prompt: {error}")
        assert client.get_state()["messageCount"] == 0
    assert loopback.requests == []


@pytest.mark.parametrize("kind", ["prompt", "steer", "follow_up"])
def test_an_empty_message_without_images_is_refused_and_nothing_is_sent(project, loopback, models, kind):
    # -p, the TUI and line mode never send an empty prompt; a request for nothing still costs a call.
    with start_client(project, *MODEL) as client:
        with pytest.raises(RpcError) as refused:
            client.request({"type": kind, "message": " \n\t "})
        assert str(refused.value).endswith(f"{kind}: 'message' is empty")
        assert client.get_state()["messageCount"] == 0
    assert loopback.requests == []
