package main

import (
	"bytes"

	"fmt"
	"net/http"

	wire "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/wopinterop/wopinterop/interop/memstore"
)

// prepare gives an A2A server the completed task GetTask reads: one
// SendMessage of the no-op skill.
func prepare(client *http.Client, s *server) error {
	if s.a2aURL == "" || s.taskID != "" {
		return nil
	}
	var r struct{ Task *wire.Task }
	if err := call(client, request{s.a2aURL, a2aHeader(s.auth), sendBody(0, s.tenant, s.name+"-fixture", memstore.FixtureNoop, false)}, &r); err != nil {
		return fmt.Errorf("%s: the GetTask fixture: %w", s.name, err)
	}
	if r.Task == nil || r.Task.Status.State != wire.TaskStateCompleted {
		return fmt.Errorf("%s: the GetTask fixture did not complete: %+v", s.name, r.Task)
	}
	s.taskID = string(r.Task.ID)
	return nil
}

// probe reads ours' answers, the bare server's fixed results.
func probe(client *http.Client, ours *server, listSize int) (answers, error) {
	var a answers
	var sent struct{ Task *wire.Task }
	steps := []struct {
		what string
		req  request
		into any
	}{
		{"GetTask", request{ours.a2aURL, a2aHeader(ours.auth), closeID([]byte(`{"jsonrpc":"2.0","method":"GetTask","params":{"id":"`+ours.taskID+`"},"id":`), 0)}, &a.Task},
		{"SendMessage", request{ours.a2aURL, a2aHeader(ours.auth), sendBody(0, ours.tenant, "probe", memstore.FixtureNoop, false)}, &sent},
		{"ListTasks", request{ours.a2aURL, a2aHeader(ours.listAuth), closeID([]byte(`{"jsonrpc":"2.0","method":"ListTasks","params":{"pageSize":50},"id":`), 0)}, &a.Page},
		{"tools/list", request{ours.mcpURL, mcpHeader(ours.auth, "tools/list", ""), closeID([]byte(`{"jsonrpc":"2.0","method":"tools/list","params":{`+mcpMeta+`},"id":`), 0)}, &a.ToolsList},
		{"tools/call", request{ours.mcpURL, mcpHeader(ours.auth, "tools/call", memstore.FixtureNoop), closeID([]byte(`{"jsonrpc":"2.0","method":"tools/call","params":{"name":"`+memstore.FixtureNoop+`","arguments":{},`+mcpMeta+`},"id":`), 0)}, &a.ToolsCall},
	}
	for _, st := range steps {
		if err := call(client, st.req, st.into); err != nil {
			return answers{}, fmt.Errorf("probe ours' %s: %w", st.what, err)
		}
	}
	a.Sent = sent.Task
	if a.Task == nil || a.Sent == nil || a.Page == nil || a.Page.TotalSize != listSize {
		return answers{}, fmt.Errorf("probe ours: incomplete answers")
	}
	return a, nil
}

// call sends one request (id 0) and decodes its result into v.
func call(client *http.Client, r request, v any) error {
	var buf bytes.Buffer
	status, err := post(client, r, &buf)
	if err != nil {
		return err
	}
	return result(0, status, buf.Bytes(), v)
}
