"""What every client shares, interactive or not: how a signal ends the process."""
