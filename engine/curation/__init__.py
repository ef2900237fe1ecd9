"""Curation actions a person takes on the memory files: marking a changed fact superseded by its
newer version (and undoing it), and the supersessions agents propose for the person to decide.

The marker format (issue 36) is parsed in :mod:`clawmem.engine.workspace.annotations`; this package
writes it with the workspace's atomic, hash-checked, folder-locked write.
"""
