"""fieldqa's Textual UI: drives the engine through `tui.engine_port`, never blocks."""
