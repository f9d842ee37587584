// Package a2a will hold the A2A 1.0 server surface: agent cards, the
// JSON-RPC and HTTP+JSON bindings, and every operation row of the interop
// map (RULES §3–§8). It has no code yet.
package a2a
