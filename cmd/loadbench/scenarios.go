package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"

	wire "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/wopinterop/wopinterop/interop/memstore"
)

// The scenarios, in the order they run.
const (
	scGetTask     = "gettask"
	scSendMessage = "sendmessage"
	scListTasks   = "listtasks"
	scToolsList   = "toolslist"
	scToolsCall   = "toolscall"
	scFanout      = "fanout"
	scPush        = "push"
)

var allScenarios = []string{scGetTask, scSendMessage, scListTasks, scToolsList, scToolsCall, scFanout, scPush}

// Protocol constants of the requests (A2A 1.0.1 §9.4 JSON-RPC; MCP
// 2026-07-28 basic/transports, the stateless request headers).
const (
	a2aVersion  = "1.0"
	mcpRevision = "2026-07-28"
	listPage    = 50
	mcpMeta     = `"_meta":{"io.modelcontextprotocol/protocolVersion":"` + mcpRevision + `","io.modelcontextprotocol/clientCapabilities":{}}`
)

// unaryFor is scenario sc against s, or false when s does not speak its
// protocol. listSize is how many tasks the list tenant holds.
func unaryFor(sc string, s *server, listSize int) (unary, bool) {
	switch sc {
	case scGetTask:
		if s.a2aURL == "" {
			return unary{}, false
		}
		h := a2aHeader(s.auth)
		pre := []byte(`{"jsonrpc":"2.0","method":"GetTask","params":{"id":"` + s.taskID + `"},"id":`)
		return unary{
			build: func(i int) request { return request{s.a2aURL, h, closeID(pre, i)} },
			check: func(i, st int, b []byte) error { return checkGetTask(i, st, b, s.taskID) },
		}, true
	case scSendMessage:
		if s.a2aURL == "" {
			return unary{}, false
		}
		h := a2aHeader(s.auth)
		return unary{
			build: func(i int) request {
				return request{s.a2aURL, h, sendBody(i, s.tenant, s.name, memstore.FixtureNoop, false)}
			},
			check: checkSend,
		}, true
	case scListTasks:
		if s.a2aURL == "" {
			return unary{}, false
		}
		h := a2aHeader(s.listAuth)
		pre := []byte(`{"jsonrpc":"2.0","method":"ListTasks","params":{"pageSize":` + strconv.Itoa(listPage) + `},"id":`)
		return unary{
			build: func(i int) request { return request{s.a2aURL, h, closeID(pre, i)} },
			check: func(i, st int, b []byte) error { return checkList(i, st, b, listSize) },
		}, true
	case scToolsList:
		if s.mcpURL == "" {
			return unary{}, false
		}
		h := mcpHeader(s.auth, "tools/list", "")
		pre := []byte(`{"jsonrpc":"2.0","method":"tools/list","params":{` + mcpMeta + `},"id":`)
		return unary{
			build: func(i int) request { return request{s.mcpURL, h, closeID(pre, i)} },
			check: checkToolsList,
		}, true
	case scToolsCall:
		if s.mcpURL == "" {
			return unary{}, false
		}
		h := mcpHeader(s.auth, "tools/call", memstore.FixtureNoop)
		pre := []byte(`{"jsonrpc":"2.0","method":"tools/call","params":{"name":"` + memstore.FixtureNoop + `","arguments":{},` + mcpMeta + `},"id":`)
		return unary{
			build: func(i int) request { return request{s.mcpURL, h, closeID(pre, i)} },
			check: checkToolsCall,
		}, true
	}
	return unary{}, false
}

// closeID appends the request id i and the closing brace to pre.
func closeID(pre []byte, i int) []byte {
	b := make([]byte, 0, len(pre)+12)
	b = append(b, pre...)
	return append(strconv.AppendInt(b, int64(i), 10), '}')
}

// sendBody is a SendMessage of skill, through the agent of routing value
// tenant when not "", with a messageId unique to server and i (a repeated
// one would take the idempotent path).
func sendBody(i int, tenant, server, skill string, immediately bool) []byte {
	b := make([]byte, 0, 256)
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = strconv.AppendInt(b, int64(i), 10)
	b = append(b, `,"method":"SendMessage","params":{`...)
	if tenant != "" {
		b = append(b, `"tenant":"`...)
		b = append(b, tenant...)
		b = append(b, `",`...)
	}
	b = append(b, `"message":{"messageId":"m-`...)
	b = append(b, server...)
	b = append(b, '-')
	b = strconv.AppendInt(b, int64(i), 10)
	b = append(b, `","role":"ROLE_USER","parts":[{"text":"go"}],"metadata":{"skillId":"`...)
	b = append(b, skill...)
	b = append(b, `"}}`...)
	if immediately {
		b = append(b, `,"configuration":{"returnImmediately":true}`...)
	}
	return append(b, `}}`...)
}

func a2aHeader(auth string) http.Header {
	return http.Header{
		"Content-Type":  {"application/json"},
		"A2a-Version":   {a2aVersion},
		"Authorization": {auth},
	}
}

func mcpHeader(auth, method, name string) http.Header {
	h := http.Header{
		"Content-Type":         {"application/json"},
		"Accept":               {"application/json, text/event-stream"},
		"Mcp-Protocol-Version": {mcpRevision},
		"Mcp-Method":           {method},
		"Authorization":        {auth},
	}
	if name != "" {
		h["Mcp-Name"] = []string{name}
	}
	return h
}

// envelope is a JSON-RPC 2.0 response.
type envelope struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result"`
	Error   json.RawMessage `json:"error"`
}

// result decodes a 200 JSON-RPC success answer to request id i: its
// result into v.
func result(i, status int, body []byte, v any) error {
	if status != http.StatusOK {
		return fmt.Errorf("HTTP %d: %.300s", status, body)
	}
	var env envelope
	if err := json.Unmarshal(body, &env); err != nil {
		return fmt.Errorf("not JSON-RPC: %w: %.300s", err, body)
	}
	if env.JSONRPC != "2.0" || string(env.ID) != strconv.Itoa(i) || env.Error != nil || env.Result == nil {
		return fmt.Errorf("not a JSON-RPC success: %.300s", body)
	}
	if err := json.Unmarshal(env.Result, v); err != nil {
		return fmt.Errorf("result: %w: %.300s", err, body)
	}
	return nil
}

func checkGetTask(i, status int, body []byte, id string) error {
	var t wire.Task
	if err := result(i, status, body, &t); err != nil {
		return err
	}
	if string(t.ID) != id || t.Status.State != wire.TaskStateCompleted || len(t.Artifacts) == 0 {
		return fmt.Errorf("GetTask: not the completed task %s: %.300s", id, body)
	}
	return nil
}

func checkSend(i, status int, body []byte) error {
	var r struct{ Task *wire.Task }
	if err := result(i, status, body, &r); err != nil {
		return err
	}
	if r.Task == nil || r.Task.ID == "" || r.Task.Status.State != wire.TaskStateCompleted || len(r.Task.Artifacts) == 0 {
		return fmt.Errorf("SendMessage: not a completed task with its artifact: %.300s", body)
	}
	return nil
}

func checkList(i, status int, body []byte, listSize int) error {
	var r wire.ListTasksResponse
	if err := result(i, status, body, &r); err != nil {
		return err
	}
	want := min(listPage, listSize)
	if len(r.Tasks) != want || r.TotalSize != listSize || (listSize > listPage) != (r.NextPageToken != "") {
		return fmt.Errorf("ListTasks: want %d of %d tasks and a next page: got %d of %d, next %q", want, listSize, len(r.Tasks), r.TotalSize, r.NextPageToken)
	}
	for _, t := range r.Tasks {
		if t.ID == "" || t.Status.State != wire.TaskStateCompleted {
			return fmt.Errorf("ListTasks: a task that is not completed: %.300s", body)
		}
	}
	return nil
}

func checkToolsList(i, status int, body []byte) error {
	var r struct {
		Tools []struct{ Name string }
	}
	if err := result(i, status, body, &r); err != nil {
		return err
	}
	for _, t := range r.Tools {
		if t.Name == memstore.FixtureNoop {
			return nil
		}
	}
	return fmt.Errorf("tools/list: no %s: %.300s", memstore.FixtureNoop, body)
}

func checkToolsCall(i, status int, body []byte) error {
	var r struct {
		Content []struct{ Type string }
		IsError bool
	}
	if err := result(i, status, body, &r); err != nil {
		return err
	}
	if r.IsError || len(r.Content) == 0 || r.Content[0].Type == "" {
		return fmt.Errorf("tools/call: not a successful result with content: %.300s", body)
	}
	return nil
}
