-- Whether the MCP host of a session said at initialize that it can be asked (elicitation): a tool call behind a
-- person's yes then asks the host's user instead of being refused. Any process serving the session reads it here.
ALTER TABLE mcp_sessions ADD COLUMN elicitation boolean NOT NULL DEFAULT false;
