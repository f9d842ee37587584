package remote

import (
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Stand-in until the connection side's admission check is merged: that
// one also refuses a tool whose listed definition no longer matches its
// admitted digest. Delete this file when i13-conn's admitted lands.
func (s *Session) admitted(name string) (*mcp.Tool, error) {
	if !slices.ContainsFunc(s.Admission.Tools, func(t AdmittedTool) bool { return t.Name == name }) {
		return nil, &CallError{Field: "tool", Reason: "not an admitted tool of this server"}
	}
	return &mcp.Tool{Name: name}, nil
}
