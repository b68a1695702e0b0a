"""Agent tool surfaces: one registry, rendered as MCP, JSON envelope and schemas."""
