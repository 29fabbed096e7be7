"""What the agent is told: context files, SOUL/MEMORY/USER, skills and prompt templates, and
the system prompt built from them."""
