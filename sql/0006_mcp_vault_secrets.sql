-- Secret names a stdio MCP server's subprocess may read at run time through /api/vault/get with its own token.
ALTER TABLE mcp_servers ADD COLUMN vault_secrets jsonb NOT NULL DEFAULT '[]';
