"""What every client shares, interactive or not: how a signal ends the process, and how a
client's coroutine becomes an exit status."""
