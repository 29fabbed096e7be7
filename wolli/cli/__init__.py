"""The command line: ``wolli [options] [prompt]`` picks a mode (:mod:`.main`), and the
subcommands (``wolli mcp ...``) live beside it, one module each."""
