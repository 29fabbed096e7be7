"""The TUI's widgets, one concern per module."""
