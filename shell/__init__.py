"""What every front end shares below it: the global options, the values given from outside, and
what is said on stderr. The CLI, the MCP server and the app each import this; none imports another."""
