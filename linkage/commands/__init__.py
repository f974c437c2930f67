"""Command-line verbs that live in their own modules; each exposes a click command `command`,
registered on `linkage.cli.main`. Heavy imports stay inside the command functions so that
`linkage --help` stays fast."""
