// Package hostapp is the example host (command examples/host; its
// documentation is the command's): the OpenWOP v2 REST subset, the A2A
// surface and the MCP server over one store. It is a package so that
// another main can run the same host over a different store: examples/host
// runs it on the in-memory store, and the PostgreSQL module's cmd/host on
// PostgreSQL, replicas sharing one database (see [Main] and [Backend]).
package hostapp
