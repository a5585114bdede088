"""semsearch mcp: the index served to language-model clients over MCP."""
