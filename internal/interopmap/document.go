package interopmap

import (
	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/wopinterop/wopinterop/interop"
)

// document is the JSON form of an interop map. Field order is the order
// [Map.JSON] writes, which is the order of mapping/data/interopmap.json.
type document struct {
	Schema  string  `json:"$schema,omitempty"`
	Comment string  `json:"$comment,omitempty"`
	Version int     `json:"version"`
	Updated string  `json:"updated"`
	Pins    docPins `json:"pins"`
	A2A     docA2A  `json:"a2a"`
	MCP     docMCP  `json:"mcp"`
}

type docPins struct {
	A2A      docPin  `json:"a2a"`
	MCP      docPin  `json:"mcp"`
	MCPTasks *docPin `json:"mcpTasks,omitempty"`
}

type docPin struct {
	Release    string `json:"release,omitempty"`
	Negotiated string `json:"negotiated,omitempty"`
	Extension  string `json:"extension,omitempty"`
	Revision   string `json:"revision,omitempty"`
	Spec       string `json:"spec"`
	Proto      string `json:"proto,omitempty"`
	Schema     string `json:"schema,omitempty"`
}

type docA2A struct {
	Operations       []docOperation  `json:"operations"`
	Card             []docElement    `json:"card"`
	TaskState        []docStateRow   `json:"taskState"`
	TaskStateReverse []docReverseRow `json:"taskStateReverse"`
	Errors           []docErrorRow   `json:"errors"`
	Fields           []docElement    `json:"fields"`
}

type docMCP struct {
	Features      []docFeature   `json:"features"`
	Methods       []docOperation `json:"methods"`
	Headers       []docElement   `json:"headers"`
	Meta          []docElement   `json:"meta"`
	MRTR          []docElement   `json:"mrtr"`
	Cache         []docElement   `json:"cache"`
	Authorization []docElement   `json:"authorization"`
	Tasks         *docTasks      `json:"tasks,omitempty"`
}

type docTasks struct {
	Status  []docTaskStatusRow `json:"status"`
	Methods []docOperation     `json:"methods"`
	Fields  []docElement       `json:"fields"`
}

type docOperation struct {
	Upstream    string   `json:"upstream"`
	HTTP        string   `json:"http,omitempty"`
	When        string   `json:"when,omitempty"`
	V2Operation *string  `json:"v2Operation"`
	Requires    []string `json:"requires"`
	Rule        string   `json:"rule"`
}

type docElement struct {
	Element string `json:"element"`
	Rule    string `json:"rule"`
}

type docFeature struct {
	ID          string   `json:"id"`
	RequiredFor []string `json:"requiredFor"`
	Meaning     string   `json:"meaning"`
}

type docStateRow struct {
	RunStatus     interop.RunStatus     `json:"runStatus"`
	InterruptKind interop.InterruptKind `json:"interruptKind,omitempty"`
	Stored        StoredState           `json:"stored"`
	Wire          a2a.TaskState         `json:"wire"`
	Carrier       string                `json:"carrier,omitempty"`
}

type docReverseRow struct {
	Wire      a2a.TaskState     `json:"wire"`
	RunStatus interop.RunStatus `json:"runStatus"`
	Note      string            `json:"note,omitempty"`
}

type docErrorRow struct {
	Upstream         string  `json:"upstream"`
	JSONRPC          int     `json:"jsonrpc"`
	GRPC             string  `json:"grpc"`
	HTTP             int     `json:"http"`
	Reason           string  `json:"reason,omitempty"`
	ServerWhen       *string `json:"serverWhen"`
	ClientProjection string  `json:"clientProjection"`
	Note             string  `json:"note,omitempty"`
}

type docTaskStatusRow struct {
	RunStatus  interop.RunStatus `json:"runStatus"`
	TaskStatus TaskStatus        `json:"taskStatus"`
	Note       string            `json:"note,omitempty"`
}
