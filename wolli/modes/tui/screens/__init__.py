"""Modal screens: the ``ctx.ui`` dialogs."""
