"""The one start-up path every mode takes: a request in (options, @file attachments), a host
and a started session out."""
