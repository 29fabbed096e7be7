"""The handler channel: extension code awaited at the points where it can change what
happens (tool calls, context, input, provider requests), results folded, each failure isolated."""
