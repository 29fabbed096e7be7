"""Words the HTTP layer appends to a failure it will not retry again.

Errors reach the session only as text (``AssistantMessage.error_message``, the persisted
format), so these markers are how the session's auto-retry knows the HTTP layer already
spent the retry budget, or that the server asked for a longer wait than allowed. Kept in a
module of their own so the session can read them without importing httpx.
"""

GAVE_UP_MARK = "(gave up after"
SERVER_WAIT_MARK = "(server asked to retry in"
FINAL_MARKS = (GAVE_UP_MARK, SERVER_WAIT_MARK)
