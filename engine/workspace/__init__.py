"""The Markdown workspace: discovering memory files, reading them safely, parsing entries, writing atomically."""
