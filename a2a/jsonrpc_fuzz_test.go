package a2a

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// FuzzJSONRPCRequest drives the whole handler, over a memstore with the
// conformance fixtures, with arbitrary bodies. It must never panic, never
// answer 5xx to client input, and always answer a JSON-RPC response (or a
// batch of them), an event stream of JSON-RPC responses, or nothing (204,
// notifications only). An unauthenticated request is answered 401 with a
// JSON-RPC error whose id is null, its body unread.
func FuzzJSONRPCRequest(f *testing.F) {
	seeds := []string{
		rpcBody(1, methodGetTask, map[string]any{"id": "acme/AAAAAAAAAAAAAAAAAAAAAAAAAA", "historyLength": 2}),
		rpcBody("s", methodSendMessage, map[string]any{"message": rpcMessage("m-f1", "conformance-noop", "x")}),
		rpcBody(2, methodSendMessage, map[string]any{"message": rpcMessage("m-f2", "conformance-approval", "x"), "configuration": map[string]any{"historyLength": 0}}),
		rpcBody(3, methodSendMessage, map[string]any{"message": acceptMessage("m-f3", "acme/AAAAAAAAAAAAAAAAAAAAAAAAAA")}),
		rpcBody(4, methodSendStreamingMessage, map[string]any{"message": rpcMessage("m-f4", "conformance-noop", "x")}),
		rpcBody(5, methodListTasks, map[string]any{"pageSize": 3, "status": "TASK_STATE_WORKING", "statusTimestampAfter": "2026-01-01T00:00:00Z"}),
		rpcBody(6, methodCancelTask, map[string]any{"id": "acme~2FAAAAAAAAAAAAAAAAAAAAAAAAAA"}),
		rpcBody(7, methodSubscribeToTask, map[string]any{"id": "acme/AAAAAAAAAAAAAAAAAAAAAAAAAA"}),
		rpcBody(8, methodGetExtendedAgentCard, map[string]any{"tenant": "x"}),
		rpcBody(9, methodCreatePushConfig, map[string]any{"taskId": "acme/AAAAAAAAAAAAAAAAAAAAAAAAAA", "url": "https://h.example"}),
		rpcBody(nil, methodListTasks, nil),
		`[` + rpcBody(1, methodListTasks, nil) + `,` + rpcBody(nil, methodGetTask, map[string]any{"id": "x"}) + `,1,[]]`,
		rpcBody(nil, methodSendMessage, map[string]any{"message": rpcMessage("m-f5", "conformance-noop", "x")}),
		"[" + strings.Repeat(rpcBody(1, methodGetTask, map[string]any{"id": "x"})+",", defaultMaxBatch) + "1]",
		`[]`, `{}`, `null`, `"x"`, `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{`,
		`{"jsonrpc":"2.0","id":1,"Method":"GetTask"}`,
		`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageID":"m","parts":[{"Text":"x"}]}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"file":{}}]}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m-d","role":"ROLE_USER","parts":[{"data":{"z":12345678901234567890,"a":[1.0,1e2,-0]}}],"referenceTaskIds":["acme/x"],"extensions":["urn:x"],"metadata":{"skillId":"conformance-noop"}}}}`,
	}
	for _, s := range seeds {
		f.Add([]byte(s), true)
	}
	f.Add([]byte(seeds[0]), false)

	e := newRPCEnv(f, func(c *testConfig) { c.BlockTimeout = 200 * time.Millisecond })
	f.Fuzz(func(t *testing.T, body []byte, authenticated bool) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		r := httptest.NewRequestWithContext(ctx, http.MethodPost, rpcPath, bytes.NewReader(body))
		r.Header.Set("A2A-Version", "1.0")
		if authenticated {
			r.Header.Set("Authorization", "Bearer "+rpcKeyAcme)
		}
		rec := httptest.NewRecorder()
		e.handler.ServeHTTP(rec, r)

		ct := rec.Header().Get("Content-Type")
		switch {
		case rec.Code == http.StatusNoContent:
			if rec.Body.Len() != 0 {
				t.Fatalf("HTTP %d with a body %q", rec.Code, rec.Body)
			}
		case !authenticated:
			if rec.Code != http.StatusUnauthorized || !bytes.HasPrefix(rec.Body.Bytes(), []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-31401,`)) {
				t.Fatalf("unauthenticated: HTTP %d %s", rec.Code, rec.Body)
			}
		case rec.Code >= 500:
			t.Fatalf("HTTP %d for client input %q: %s", rec.Code, body, rec.Body)
		case ct == "text/event-stream":
			for _, frame := range strings.Split(strings.TrimSuffix(rec.Body.String(), "\n\n"), "\n\n") {
				if frame == ":" || frame == "" && rec.Body.Len() == 0 {
					continue
				}
				data, ok := strings.CutPrefix(frame, "data: ")
				if !ok {
					t.Fatalf("stream frame %q", frame)
				}
				checkRPCResponse(t, []byte(data))
			}
		case ct == "application/json":
			if rec.Code != 200 && rec.Code != 401 && rec.Code != 413 {
				t.Fatalf("HTTP %d for a JSON-RPC answer", rec.Code)
			}
			out := bytes.TrimSpace(rec.Body.Bytes())
			if len(out) > 0 && out[0] == '[' {
				var list []json.RawMessage
				if err := json.Unmarshal(out, &list); err != nil || len(list) == 0 {
					t.Fatalf("batch answer %s", out)
				}
				for _, el := range list {
					checkRPCResponse(t, el)
				}
				return
			}
			checkRPCResponse(t, out)
		default:
			t.Fatalf("HTTP %d Content-Type %q body %q", rec.Code, ct, rec.Body)
		}
	})
}

// checkRPCResponse asserts the JSON-RPC 2.0 response shape and, for an
// error, the A2A data rule: absent, or exactly one typed detail.
func checkRPCResponse(t *testing.T, b []byte) {
	t.Helper()
	var resp struct {
		JSONRPC *string         `json:"jsonrpc"`
		Result  json.RawMessage `json:"result"`
		Error   *struct {
			Code    *int             `json:"code"`
			Message *string          `json:"message"`
			Data    []map[string]any `json:"data"`
		} `json:"error"`
	}
	if err := json.Unmarshal(b, &resp); err != nil {
		t.Fatalf("not JSON: %v: %s", err, b)
	}
	// A null id decodes to a nil pointer; look for the member itself.
	var members map[string]json.RawMessage
	if err := json.Unmarshal(b, &members); err != nil {
		t.Fatal(err)
	}
	if resp.JSONRPC == nil || *resp.JSONRPC != "2.0" || !validID(members["id"]) {
		t.Fatalf("bad envelope: %s", b)
	}
	if (resp.Result == nil) == (resp.Error == nil) {
		t.Fatalf("want exactly one of result and error: %s", b)
	}
	if resp.Error != nil {
		if resp.Error.Code == nil || resp.Error.Message == nil || *resp.Error.Message == "" {
			t.Fatalf("bad error: %s", b)
		}
		if resp.Error.Data != nil && (len(resp.Error.Data) != 1 || resp.Error.Data[0]["@type"] == nil) {
			t.Fatalf("bad error data: %s", b)
		}
	}
}
