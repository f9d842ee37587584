package remote

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"github.com/gowebpki/jcs"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The members each digest covers. They are the item's contract and what
// a model is shown of it; a change to any of them is a different item,
// which must be admitted again (admission-boundaries §18.3: a tool whose
// definition changed after review — a "rug pull" — is not the tool that
// was reviewed):
//
//   - a tool: name; title and description (what the model reads, and so
//     where an instruction would be slipped in); inputSchema and
//     outputSchema (what it accepts and returns); annotations (readOnly,
//     destructive, idempotent and openWorld hints, on which the host's
//     effect handling relies);
//   - a resource: uri, name, title, description, mimeType;
//   - a prompt: name, title, description, arguments.
//
// Left out on purpose: _meta (server bookkeeping, free to change between
// listings), icons (presentation), a resource's size and annotations
// (lastModified and priority move with the content, not the contract).
var (
	toolMembers     = []string{"name", "title", "description", "inputSchema", "outputSchema", "annotations"}
	resourceMembers = []string{"uri", "name", "title", "description", "mimeType"}
	promptMembers   = []string{"name", "title", "description", "arguments"}
)

// ToolDigest is the digest an admission pins a tool with
// ([AdmittedTool].Digest): the lowercase hex SHA-256 of the RFC 8785
// (JCS) canonical JSON of the tool's name, title, description,
// inputSchema, outputSchema and annotations, as go-sdk encodes the tool a
// server listed (a member the tool does not have, or has as null, is left
// out).
//
// The host computes it from the tools/list it reviewed when it admits the
// server; every list a [Session] returns computes it again, through the
// same encoding, so both agree whatever spacing, member order or number
// spelling the server used. It is "" only for a hand-built tool whose
// schema does not encode.
func ToolDigest(t *mcp.Tool) string { return digest(t, toolMembers) }

// ResourceDigest is ToolDigest for a resource ([AdmittedResource].Digest):
// its uri, name, title, description and mimeType.
func ResourceDigest(r *mcp.Resource) string { return digest(r, resourceMembers) }

// PromptDigest is ToolDigest for a prompt ([AdmittedPrompt].Digest): its
// name, title, description and arguments.
func PromptDigest(p *mcp.Prompt) string { return digest(p, promptMembers) }

func digest(v any, members []string) string {
	canonical, err := canonicalMembers(v, members)
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(canonical)
	return hex.EncodeToString(sum[:])
}

// canonicalMembers is the RFC 8785 canonical JSON of the named members of
// v's JSON encoding.
func canonicalMembers(v any, members []string) ([]byte, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(raw, &all); err != nil {
		return nil, err
	}
	picked := make(map[string]json.RawMessage, len(members))
	for _, m := range members {
		if v, ok := all[m]; ok && string(v) != "null" {
			picked[m] = v
		}
	}
	raw, err = json.Marshal(picked)
	if err != nil {
		return nil, err
	}
	return jcs.Transform(raw)
}
