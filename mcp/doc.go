// Package mcp will hold the MCP 2026-07-28 server mount: the request guard,
// server/discover, per-caller tools, multi-round input and the Tasks
// extension (RULES §12–§15). It has no code yet.
package mcp
