"""Extension code: finding, importing and reloading it, and the objects it is handed.

:mod:`.api` is the ``wolli`` object a factory receives, :mod:`.context` the ``ctx`` types
(``ExtensionUI`` is the seam every client implements), :mod:`.manager` loads, runs and
reloads the extensions of one host. The author-facing contract is docs/extensions.md.
"""
