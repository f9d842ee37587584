// Package delegate is the host as an A2A client: it delegates a workflow
// step to a remote agent the host admitted, over a2a-go's a2aclient.
//
// (Work in progress: the connection side and the delegation lifecycle are
// being built; see ARCHITECTURE.md.)
package delegate
