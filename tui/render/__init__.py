"""Pure functions from engine dataclasses to Rich renderables, one module per pane that needs many."""
