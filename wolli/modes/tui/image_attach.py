"""A pasted image (Ctrl+V, or a dropped image file's path) into the prompt editor.

Reading and shrinking the image is :mod:`.image_paste`; this is the app's side of it.
"""

from __future__ import annotations

from .app_view import TuiApp
from .image_paste import read_pasted_image


async def attach_pasted_image(app: TuiApp, path: str | None) -> None:
    """A pasted image file or the clipboard's image into the editor (a text paste when the
    clipboard holds none); refused with a notice for a model that takes no images."""
    model = getattr(app.controller.session, "model", None)
    try:
        found = await read_pasted_image(path)
    except Exception as exc:
        app.notify(f"image not attached: {exc}", severity="error")
        return
    if found is None:
        app.editor.action_paste()
        return
    if model is not None and "image" not in getattr(model, "input", ["image"]):
        app.notify(f"{model.provider}/{model.id} does not take images; not attached", severity="warning")
        return
    image, notes = found
    app.editor.attach_image(image)
    for note in notes:
        app.notify(note, severity="warning")
