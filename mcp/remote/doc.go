// Package remote is the host as an MCP client: a workflow step calls a tool
// on an MCP server the host admitted, over go-sdk's mcp.Client and its
// streamable client transport.
//
// (Work in progress: the connection side and the call path are being
// built; see ARCHITECTURE.md.)
package remote
