"""One live session: the agent, its session file, the prompt pipeline, queues, compaction,
retries, tree navigation and the handle code outside the runtime holds."""
