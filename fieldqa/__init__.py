"""Command-line entry point of fieldqa (the engine lives in `engine`, the TUI in `tui`)."""
