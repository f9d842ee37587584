package main

import (
	"encoding/json"
	"net/http"
	"sync"

	wire "github.com/a2aproject/a2a-go/v2/a2a"
)

// answers are the fixed results the bare server encodes: ours' own
// answers, so that every server writes the same shapes.
type answers struct {
	Task      *wire.Task              `json:"task"` // GetTask
	Sent      *wire.Task              `json:"sent"` // SendMessage's task
	Page      *wire.ListTasksResponse `json:"page"`
	ToolsList json.RawMessage         `json:"toolsList"`
	ToolsCall json.RawMessage         `json:"toolsCall"`
}

// startBare serves the bare handlers: A2A at /a2a, MCP at /mcp.
func startBare(a answers, hold *holder) (*server, error) {
	b := &bare{answers: a, hold: hold}
	mux := http.NewServeMux()
	mux.HandleFunc("/a2a", b.a2a)
	mux.HandleFunc("/mcp", b.mcp)
	base, stop, err := serve(mux)
	if err != nil {
		return nil, err
	}
	return &server{name: "bare", a2aURL: base + "/a2a", mcpURL: base + "/mcp", auth: "Bearer " + benchKey,
		listAuth: "Bearer " + listKey, held: true, taskID: string(a.Task.ID), stop: stop}, nil
}

// bare does the wire work of a JSON-RPC server and nothing else: it
// decodes the request envelope and its params into the protocol's types
// and encodes a fixed result.
type bare struct {
	answers
	hold *holder
	hub  hub
}

type rpcRequest struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
}

type rpcResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result"`
}

func (b *bare) a2a(w http.ResponseWriter, r *http.Request) {
	var req rpcRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var res any
	var err error
	switch req.Method {
	case "GetTask":
		var p wire.GetTaskRequest
		err = json.Unmarshal(req.Params, &p)
		res = b.Task
	case "SendMessage":
		var p wire.SendMessageRequest
		err = json.Unmarshal(req.Params, &p)
		res = struct {
			Task *wire.Task `json:"task"`
		}{b.Sent}
		if err == nil && p.Message != nil && p.Message.Metadata["skillId"] == holdSkill {
			b.hub.follow(b.hold.take())
		}
	case "ListTasks":
		var p wire.ListTasksRequest
		err = json.Unmarshal(req.Params, &p)
		res = b.Page
	case "SubscribeToTask":
		var p wire.SubscribeToTaskRequest
		if err = json.Unmarshal(req.Params, &p); err == nil {
			b.subscribe(w, r, req.ID, string(p.ID))
			return
		}
	default:
		http.Error(w, "unknown method", http.StatusNotFound)
		return
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	writeResult(w, req.ID, res)
}

func (b *bare) mcp(w http.ResponseWriter, r *http.Request) {
	var req rpcRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var p struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
		Meta      map[string]any  `json:"_meta"`
	}
	if err := json.Unmarshal(req.Params, &p); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	switch req.Method {
	case "tools/list":
		writeResult(w, req.ID, b.ToolsList)
	case "tools/call":
		writeResult(w, req.ID, b.ToolsCall)
	default:
		http.Error(w, "unknown method", http.StatusNotFound)
	}
}

func writeResult(w http.ResponseWriter, id json.RawMessage, res any) {
	out, err := json.Marshal(rpcResponse{JSONRPC: "2.0", ID: id, Result: res})
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(out)
}

// subscribe streams the held task: the task first, then an artifact
// update per update of the hub, each a JSON-RPC response in an SSE event
// (A2A 1.0.1 §9.4.2), until the held task ends or the client goes.
func (b *bare) subscribe(w http.ResponseWriter, r *http.Request, id json.RawMessage, taskID string) {
	updates, leave := b.hub.join()
	defer leave()
	w.Header().Set("Content-Type", "text/event-stream")
	f := w.(http.Flusher)
	task := *b.Sent
	task.ID = wire.TaskID(taskID)
	if !writeEvent(w, id, map[string]any{"task": &task}) {
		return
	}
	f.Flush()
	for {
		select {
		case _, ok := <-updates:
			if !ok {
				return
			}
			ev := &wire.TaskArtifactUpdateEvent{TaskID: task.ID, ContextID: task.ContextID,
				Artifact: &wire.Artifact{ID: tickArtifact, Parts: wire.ContentParts{wire.NewTextPart("tick")}}}
			if !writeEvent(w, id, map[string]any{"artifactUpdate": ev}) {
				return
			}
			f.Flush()
		case <-r.Context().Done():
			return
		}
	}
}

func writeEvent(w http.ResponseWriter, id json.RawMessage, res any) bool {
	out, err := json.Marshal(rpcResponse{JSONRPC: "2.0", ID: id, Result: res})
	if err != nil {
		return false
	}
	out = append(append([]byte("data: "), out...), '\n', '\n')
	_, err = w.Write(out)
	return err == nil
}

// hub fans the held task's updates out to the bare server's subscribers.
type hub struct {
	mu   sync.Mutex
	subs map[chan struct{}]struct{}
}

// join subscribes to the updates; leave unsubscribes.
func (h *hub) join() (updates chan struct{}, leave func()) {
	c := make(chan struct{}, 64)
	h.mu.Lock()
	if h.subs == nil {
		h.subs = map[chan struct{}]struct{}{}
	}
	h.subs[c] = struct{}{}
	h.mu.Unlock()
	return c, func() {
		h.mu.Lock()
		delete(h.subs, c)
		h.mu.Unlock()
	}
}

// follow relays the holder's updates to every subscriber until the
// holder lets go, which ends every subscription.
func (h *hub) follow(c chan int) {
	go func() {
		for k := range c {
			h.mu.Lock()
			for s := range h.subs {
				for range k {
					s <- struct{}{}
				}
			}
			h.mu.Unlock()
		}
		h.mu.Lock()
		for s := range h.subs {
			close(s)
			delete(h.subs, s)
		}
		h.mu.Unlock()
	}()
}
