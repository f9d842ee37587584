package a2a

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	wire "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/wopinterop/wopinterop/interop/memstore"
)

// rpcGoldenCase is one exchange recorded in testdata/jsonrpc/<name>.txt.
// setup runs first (unrecorded) and returns what the request needs, e.g. a
// task id; build turns that into the call.
type rpcGoldenCase struct {
	name  string
	opts  []rpcOption
	setup func(t *testing.T, e *rpcEnv) map[string]string
	call  func(v map[string]string) rpcCall
	// check asserts the shape independently of the golden bytes.
	check func(t *testing.T, res rpcReply)
}

func runRPCGolden(t *testing.T, cases []rpcGoldenCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newRPCEnv(t, tc.opts...)
			v := map[string]string{}
			if tc.setup != nil {
				v = tc.setup(t, e)
			}
			c := tc.call(v)
			// "<R:agent-id>" in a body stands for that agent's routing
			// value; the normaliser writes the placeholder back.
			for agent, r := range e.agentR {
				c.body = strings.ReplaceAll(c.body, "<R:"+agent+">", r)
			}
			res := e.do(t, c)
			if tc.check != nil {
				tc.check(t, res)
			}
			n := newRPCNormalizer(e.agentR)
			rpcGolden(t, tc.name, n.apply(rpcTranscript(c, res)))
		})
	}
}

// Setups shared by the cases.

func setupApproval(t *testing.T, e *rpcEnv) map[string]string {
	task := e.sendNew(t, rpcKeyAcme, "m-approval", memstore.FixtureApproval)
	if task.Status.State != wire.TaskStateInputRequired {
		t.Fatalf("approval task is %s", task.Status.State)
	}
	return map[string]string{"task": string(task.ID), "context": task.ContextID}
}

func setupCompleted(t *testing.T, e *rpcEnv) map[string]string {
	task := e.completedTask(t, "m-noop")
	return map[string]string{"task": string(task.ID), "context": task.ContextID}
}

func setupResolved(t *testing.T, e *rpcEnv) map[string]string {
	v := setupApproval(t, e)
	res := e.do(t, rpcCall{key: rpcKeyAcme, body: rpcBody(2, methodSendMessage, map[string]any{"message": acceptMessage("m-accept", v["task"])})})
	if task := rpcTask(t, res, true); task.Status.State != wire.TaskStateCompleted {
		t.Fatalf("resolved task is %s", task.Status.State)
	}
	return v
}

func setupGlobexTask(t *testing.T, e *rpcEnv) map[string]string {
	task := e.sendNew(t, rpcKeyGlobex, "m-globex", memstore.FixtureApproval)
	return map[string]string{"task": string(task.ID), "context": task.ContextID}
}

// acceptMessage is the conformance suite's approval reply: taskId, no
// contextId, the action in a data part and in metadata.openwop.interrupt.
func acceptMessage(id, taskID string) map[string]any {
	return map[string]any{
		"messageId": id, "taskId": taskID, "role": "ROLE_USER",
		"parts":    []any{map[string]any{"data": map[string]any{"action": "accept"}}},
		"metadata": map[string]any{"openwop": map[string]any{"interrupt": map[string]any{"action": "accept"}}},
	}
}

func acme(body string) rpcCall { return rpcCall{key: rpcKeyAcme, body: body} }

func wantTaskState(state wire.TaskState, wrapped bool) func(t *testing.T, res rpcReply) {
	return func(t *testing.T, res rpcReply) {
		t.Helper()
		if res.status != http.StatusOK {
			t.Fatalf("HTTP %d", res.status)
		}
		task := rpcTask(t, res, wrapped)
		if task.Status.State != state {
			t.Fatalf("state %s, want %s", task.Status.State, state)
		}
		if !strings.Contains(string(task.ID), "/") || task.ContextID == "" {
			t.Fatalf("task id %q / contextId %q: want a bound id and a contextId", task.ID, task.ContextID)
		}
	}
}

func wantErr(status, code int, reason string) func(t *testing.T, res rpcReply) {
	return func(t *testing.T, res rpcReply) {
		t.Helper()
		wantRPCError(t, res, status, code, reason)
	}
}

// TestRPCGoldenSuccess records one success exchange per method.
func TestRPCGoldenSuccess(t *testing.T) {
	runRPCGolden(t, []rpcGoldenCase{
		{
			name: "send_message_noop",
			call: func(map[string]string) rpcCall {
				return acme(rpcBody(1, methodSendMessage, map[string]any{"message": rpcMessage("m-1", memstore.FixtureNoop, "run it")}))
			},
			check: wantTaskState(wire.TaskStateCompleted, true),
		},
		{
			name: "send_message_approval",
			call: func(map[string]string) rpcCall {
				return acme(rpcBody(1, methodSendMessage, map[string]any{"message": rpcMessage("m-1", memstore.FixtureApproval, "please approve")}))
			},
			check: wantTaskState(wire.TaskStateInputRequired, true),
		},
		{
			name:  "send_message_resolve_approval",
			setup: setupApproval,
			call: func(v map[string]string) rpcCall {
				return acme(rpcBody(2, methodSendMessage, map[string]any{"message": acceptMessage("m-2", v["task"])}))
			},
			check: wantTaskState(wire.TaskStateCompleted, true),
		},
		{
			name:  "get_task",
			setup: setupApproval,
			call: func(v map[string]string) rpcCall {
				return acme(rpcBody(3, methodGetTask, map[string]any{"id": v["task"]}))
			},
			check: wantTaskState(wire.TaskStateInputRequired, false),
		},
		{
			name:  "get_task_history_length_1",
			setup: setupResolved,
			call: func(v map[string]string) rpcCall {
				return acme(rpcBody(3, methodGetTask, map[string]any{"id": v["task"], "historyLength": 1}))
			},
			check: func(t *testing.T, res rpcReply) {
				if task := rpcTask(t, res, false); len(task.History) != 1 || task.History[0].ID != "m-accept" {
					t.Fatalf("history %v, want only the last message", task.History)
				}
			},
		},
		{
			name:  "get_task_history_length_0",
			setup: setupResolved,
			call: func(v map[string]string) rpcCall {
				return acme(rpcBody("h0", methodGetTask, map[string]any{"id": v["task"], "historyLength": 0}))
			},
			check: func(t *testing.T, res rpcReply) {
				if task := rpcTask(t, res, false); len(task.History) != 0 {
					t.Fatalf("history %v, want none", task.History)
				}
			},
		},
		{
			name:  "list_tasks_context",
			setup: setupApproval,
			call: func(v map[string]string) rpcCall {
				return acme(rpcBody(4, methodListTasks, map[string]any{"contextId": v["context"]}))
			},
			check: func(t *testing.T, res rpcReply) {
				var list wire.ListTasksResponse
				if err := json.Unmarshal(decodeRPC(t, res).Result, &list); err != nil || len(list.Tasks) != 1 {
					t.Fatalf("list %+v (%v), want one task", list, err)
				}
			},
		},
		{
			// @a2a-js/sdk 1.3.0 sends "UNRECOGNIZED" for a status the
			// caller did not set: no filter.
			name:  "list_tasks_status_unrecognized",
			setup: setupApproval,
			call: func(v map[string]string) rpcCall {
				return acme(rpcBody(4, methodListTasks, map[string]any{"status": "UNRECOGNIZED", "contextId": v["context"]}))
			},
			check: func(t *testing.T, res rpcReply) {
				var list wire.ListTasksResponse
				if err := json.Unmarshal(decodeRPC(t, res).Result, &list); err != nil || len(list.Tasks) != 1 {
					t.Fatalf("list %+v (%v), want one task", list, err)
				}
			},
		},
		{
			// A tenant that is none of the caller's routing values is
			// ignored (OpenWOP interop.md §Isolation).
			name:  "list_tasks_unknown_tenant",
			setup: setupApproval,
			call: func(v map[string]string) rpcCall {
				return acme(rpcBody(4, methodListTasks, map[string]any{"tenant": "never-minted", "contextId": v["context"]}))
			},
			check: func(t *testing.T, res rpcReply) {
				var list wire.ListTasksResponse
				if err := json.Unmarshal(decodeRPC(t, res).Result, &list); err != nil || len(list.Tasks) != 1 {
					t.Fatalf("list %+v (%v), want one task", list, err)
				}
			},
		},
		{
			name: "list_tasks_empty",
			call: func(map[string]string) rpcCall {
				return acme(rpcBody(4, methodListTasks, map[string]any{}))
			},
			check: func(t *testing.T, res rpcReply) {
				if !strings.Contains(string(res.body), `"tasks":[]`) || !strings.Contains(string(res.body), `"nextPageToken":""`) {
					t.Fatalf("empty list %s: want tasks [] and nextPageToken \"\"", res.body)
				}
			},
		},
		{
			name:  "cancel_task",
			setup: setupApproval,
			call: func(v map[string]string) rpcCall {
				return acme(rpcBody(5, methodCancelTask, map[string]any{"id": v["task"]}))
			},
			check: func(t *testing.T, res rpcReply) {
				st := rpcTask(t, res, false).Status.State
				if st != wire.TaskStateWorking && st != wire.TaskStateCanceled {
					t.Fatalf("state %s, want WORKING or CANCELED", st)
				}
			},
		},
		{
			name: "get_extended_agent_card_agent",
			call: func(map[string]string) rpcCall {
				return acme(rpcBody(6, methodGetExtendedAgentCard, map[string]any{"tenant": "<R:agent-ada>"}))
			},
			check: func(t *testing.T, res rpcReply) {
				var card wire.AgentCard
				if err := json.Unmarshal(decodeRPC(t, res).Result, &card); err != nil || card.Name != "Ada" {
					t.Fatalf("card %+v (%v), want Ada's card", card, err)
				}
			},
		},
		{
			name: "get_extended_agent_card_host",
			opts: []rpcOption{func(c *testConfig) { c.ExtendedCard = true }},
			call: func(map[string]string) rpcCall {
				return acme(`{"jsonrpc":"2.0","id":7,"method":"GetExtendedAgentCard"}`)
			},
			check: func(t *testing.T, res rpcReply) {
				var card wire.AgentCard
				if err := json.Unmarshal(decodeRPC(t, res).Result, &card); err != nil || len(card.Skills) != 2 {
					t.Fatalf("card %+v (%v), want the host card with two skills", card, err)
				}
			},
		},
	})
}

// TestRPCGoldenErrors records every error row and every refusal before
// dispatch.
func TestRPCGoldenErrors(t *testing.T) {
	off := rpcCaps(caps{})
	big := `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"` + strings.Repeat("x", rpcMaxBody) + `"}}`
	runRPCGolden(t, []rpcGoldenCase{
		// -32001
		{name: "error_task_not_found_unknown", call: func(map[string]string) rpcCall {
			return acme(rpcBody(1, methodGetTask, map[string]any{"id": "acme/AAAAAAAAAAAAAAAAAAAAAAAAAA"}))
		}, check: wantErr(200, -32001, "TASK_NOT_FOUND")},
		{name: "error_task_not_found_foreign", setup: setupGlobexTask, call: func(v map[string]string) rpcCall {
			return acme(rpcBody(1, methodGetTask, map[string]any{"id": v["task"]}))
		}, check: wantErr(200, -32001, "TASK_NOT_FOUND")},
		{name: "error_task_not_found_malformed", call: func(map[string]string) rpcCall {
			return acme(rpcBody(1, methodGetTask, map[string]any{"id": "zz-conformance/xxxx"}))
		}, check: wantErr(200, -32001, "TASK_NOT_FOUND")},
		// -32002
		{name: "error_task_not_cancelable", setup: setupCompleted, call: func(v map[string]string) rpcCall {
			return acme(rpcBody(1, methodCancelTask, map[string]any{"id": v["task"]}))
		}, check: wantErr(200, -32002, "TASK_NOT_CANCELABLE")},
		// -32003: every push-config method while push is off
		{name: "error_push_create", setup: setupApproval, call: func(v map[string]string) rpcCall {
			return acme(rpcBody(1, methodCreatePushConfig, map[string]any{"taskId": v["task"], "url": "https://hooks.example/a2a"}))
		}, check: wantErr(200, -32003, "PUSH_NOTIFICATION_NOT_SUPPORTED")},
		{name: "error_push_get", setup: setupApproval, call: func(v map[string]string) rpcCall {
			return acme(rpcBody(1, methodGetPushConfig, map[string]any{"taskId": v["task"], "id": "cfg-1"}))
		}, check: wantErr(200, -32003, "PUSH_NOTIFICATION_NOT_SUPPORTED")},
		{name: "error_push_list", setup: setupApproval, call: func(v map[string]string) rpcCall {
			return acme(rpcBody(1, methodListPushConfigs, map[string]any{"taskId": v["task"]}))
		}, check: wantErr(200, -32003, "PUSH_NOTIFICATION_NOT_SUPPORTED")},
		{name: "error_push_delete", setup: setupApproval, call: func(v map[string]string) rpcCall {
			return acme(rpcBody(1, methodDeletePushConfig, map[string]any{"taskId": v["task"], "id": "cfg-1"}))
		}, check: wantErr(200, -32003, "PUSH_NOTIFICATION_NOT_SUPPORTED")},
		// -32004
		{name: "error_unsupported_send_to_terminal", setup: setupCompleted, call: func(v map[string]string) rpcCall {
			return acme(rpcBody(1, methodSendMessage, map[string]any{"message": acceptMessage("m-late", v["task"])}))
		}, check: wantErr(200, -32004, "UNSUPPORTED_OPERATION")},
		{name: "error_unsupported_subscribe_terminal", setup: setupCompleted, call: func(v map[string]string) rpcCall {
			return acme(rpcBody(1, methodSubscribeToTask, map[string]any{"id": v["task"]}))
		}, check: wantErr(200, -32004, "UNSUPPORTED_OPERATION")},
		{name: "error_unsupported_subscribe_streaming_off", opts: []rpcOption{off}, setup: setupApproval, call: func(v map[string]string) rpcCall {
			return acme(rpcBody(1, methodSubscribeToTask, map[string]any{"id": v["task"]}))
		}, check: wantErr(200, -32004, "UNSUPPORTED_OPERATION")},
		{name: "error_unsupported_stream_streaming_off", opts: []rpcOption{off}, call: func(map[string]string) rpcCall {
			return acme(rpcBody(1, methodSendStreamingMessage, map[string]any{"message": rpcMessage("m-1", memstore.FixtureNoop, "x")}))
		}, check: wantErr(200, -32004, "UNSUPPORTED_OPERATION")},
		// -32007
		{name: "error_extended_card_not_configured", call: func(map[string]string) rpcCall {
			return acme(rpcBody(1, methodGetExtendedAgentCard, nil))
		}, check: wantErr(200, -32007, "EXTENDED_AGENT_CARD_NOT_CONFIGURED")},
		{name: "error_extended_card_foreign_tenant", call: func(map[string]string) rpcCall {
			return acme(rpcBody(1, methodGetExtendedAgentCard, map[string]any{"tenant": "<R:agent-gus>"}))
		}, check: wantErr(200, -32007, "EXTENDED_AGENT_CARD_NOT_CONFIGURED")},
		// -32009
		{name: "error_version_not_supported", call: func(map[string]string) rpcCall {
			c := acme(rpcBody(1, methodGetTask, map[string]any{"id": "acme/AAAAAAAAAAAAAAAAAAAAAAAAAA"}))
			c.version = "9.9"
			return c
		}, check: func(t *testing.T, res rpcReply) {
			out := wantRPCError(t, res, 200, -32009, "VERSION_NOT_SUPPORTED")
			if md, _ := out.Error.Data[0]["metadata"].(map[string]any); md["supportedVersions"] != "1.0" {
				t.Fatalf("metadata %v, want supportedVersions 1.0", md)
			}
		}},
		// -32602
		{name: "error_invalid_params_context_mismatch", setup: setupApproval, call: func(v map[string]string) rpcCall {
			m := acceptMessage("m-2", v["task"])
			m["contextId"] = "ctx-someone-else"
			return acme(rpcBody(1, methodSendMessage, map[string]any{"message": m}))
		}, check: wantErr(200, -32602, "")},
		{name: "error_invalid_params_member_case", call: func(map[string]string) rpcCall {
			return acme(`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageID":"m-1","role":"ROLE_USER","parts":[{"text":"x"}]}}}`)
		}, check: wantErr(200, -32602, "")},
		{name: "error_invalid_params_wrong_type", call: func(map[string]string) rpcCall {
			return acme(`{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":42}}`)
		}, check: wantErr(200, -32602, "")},
		{name: "error_invalid_params_missing_id", call: func(map[string]string) rpcCall {
			return acme(`{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{}}`)
		}, check: wantErr(200, -32602, "")},
		{name: "error_invalid_params_bad_part", call: func(map[string]string) rpcCall {
			return acme(`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m-1","role":"ROLE_USER","parts":[{"file":{}}]}}}`)
		}, check: wantErr(200, -32602, "")},
		{name: "error_invalid_params_unknown_tenant", call: func(map[string]string) rpcCall {
			return acme(rpcBody(1, methodSendMessage, map[string]any{"tenant": "never-minted", "message": rpcMessage("m-1", memstore.FixtureNoop, "x")}))
		}, check: wantErr(200, -32602, "")},
		// -32600
		{name: "error_invalid_request_jsonrpc_version", call: func(map[string]string) rpcCall {
			return acme(`{"jsonrpc":"1.0","id":9,"method":"GetTask","params":{"id":"acme/AAAAAAAAAAAAAAAAAAAAAAAAAA"}}`)
		}, check: wantErr(200, -32600, "INVALID_REQUEST")},
		{name: "error_invalid_request_id_type", call: func(map[string]string) rpcCall {
			return acme(`{"jsonrpc":"2.0","id":{"n":1},"method":"GetTask","params":{}}`)
		}, check: wantErr(200, -32600, "INVALID_REQUEST")},
		{name: "error_invalid_request_params_array", call: func(map[string]string) rpcCall {
			return acme(`{"jsonrpc":"2.0","id":"p","method":"GetTask","params":["acme/AAAAAAAAAAAAAAAAAAAAAAAAAA"]}`)
		}, check: wantErr(200, -32600, "INVALID_REQUEST")},
		{name: "error_invalid_request_member_case", call: func(map[string]string) rpcCall {
			return acme(`{"jsonrpc":"2.0","id":3,"Method":"GetTask","params":{}}`)
		}, check: wantErr(200, -32600, "INVALID_REQUEST")},
		{name: "error_invalid_request_not_object", call: func(map[string]string) rpcCall {
			return acme(`"GetTask"`)
		}, check: wantErr(200, -32600, "INVALID_REQUEST")},
		// -32601
		{name: "error_method_not_found", call: func(map[string]string) rpcCall {
			return acme(rpcBody(1, "openwop.conformance.NoSuchMethod", map[string]any{}))
		}, check: wantErr(200, -32601, "METHOD_NOT_FOUND")},
		{name: "error_method_not_found_legacy_name", call: func(map[string]string) rpcCall {
			return acme(rpcBody(1, "tasks/get", map[string]any{"id": "acme/AAAAAAAAAAAAAAAAAAAAAAAAAA"}))
		}, check: wantErr(200, -32601, "METHOD_NOT_FOUND")},
		// -32700
		{name: "error_parse", call: func(map[string]string) rpcCall {
			return acme(`{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{`)
		}, check: wantErr(200, -32700, "PARSE_ERROR")},
		// 401 / 403
		{name: "error_unauthenticated", call: func(map[string]string) rpcCall {
			return rpcCall{body: rpcBody(1, methodGetTask, map[string]any{"id": "acme/AAAAAAAAAAAAAAAAAAAAAAAAAA"})}
		}, check: func(t *testing.T, res rpcReply) {
			wantRPCError(t, res, 401, codeUnauthenticated, "UNAUTHENTICATED")
			if res.header.Get("WWW-Authenticate") != "Bearer" {
				t.Fatalf("WWW-Authenticate %q", res.header.Get("WWW-Authenticate"))
			}
		}},
		{name: "error_forbidden", call: func(map[string]string) rpcCall {
			return rpcCall{key: rpcKeyDenied, body: rpcBody(1, methodGetTask, map[string]any{"id": "acme/AAAAAAAAAAAAAAAAAAAAAAAAAA"})}
		}, check: wantErr(403, codeForbidden, "PERMISSION_DENIED")},
		// 503 after Drain
		{name: "error_draining", setup: func(_ *testing.T, e *rpcEnv) map[string]string {
			e.srv.Drain()
			return nil
		}, call: func(map[string]string) rpcCall {
			return acme(rpcBody(1, methodGetTask, map[string]any{"id": "acme/AAAAAAAAAAAAAAAAAAAAAAAAAA"}))
		}, check: wantErr(503, codeServerError, "SERVER_ERROR")},
		// 413
		{name: "error_payload_too_large", call: func(map[string]string) rpcCall {
			return acme(big)
		}, check: wantErr(413, -32600, "INVALID_REQUEST")},
		// 405
		{name: "error_method_not_allowed", call: func(map[string]string) rpcCall {
			return rpcCall{verb: http.MethodGet, key: rpcKeyAcme}
		}, check: func(t *testing.T, res rpcReply) {
			wantRPCError(t, res, 405, -32600, "INVALID_REQUEST")
			if res.header.Get("Allow") != http.MethodPost {
				t.Fatalf("Allow %q", res.header.Get("Allow"))
			}
		}},
		// batches
		{name: "batch_mixed", setup: setupApproval, call: func(v map[string]string) rpcCall {
			return acme(`[` + rpcBody(1, methodGetTask, map[string]any{"id": v["task"], "historyLength": 0}) + `,` +
				rpcBody("two", "NoSuchMethod", nil) + `,` +
				rpcBody(nil, methodGetTask, map[string]any{"id": v["task"]}) + `,` +
				`5,` +
				rpcBody(3, methodGetTask, map[string]any{"id": "acme/AAAAAAAAAAAAAAAAAAAAAAAAAA"}) + `]`)
		}, check: func(t *testing.T, res rpcReply) {
			var out []rpcResponse
			if err := json.Unmarshal(res.body, &out); err != nil || len(out) != 4 {
				t.Fatalf("batch answer %s (%v): want four responses, none for the notification", res.body, err)
			}
		}},
		{name: "batch_empty", call: func(map[string]string) rpcCall { return acme(`[]`) },
			check: wantErr(200, -32600, "INVALID_REQUEST")},
		{name: "batch_streaming_refused", call: func(map[string]string) rpcCall {
			return acme(`[` + rpcBody(1, methodSendStreamingMessage, map[string]any{"message": rpcMessage("m-1", memstore.FixtureNoop, "x")}) + `]`)
		}},
		{name: "batch_notifications_only", call: func(map[string]string) rpcCall {
			return acme(`[` + rpcBody(nil, methodListTasks, map[string]any{}) + `]`)
		}, check: func(t *testing.T, res rpcReply) {
			if res.status != http.StatusNoContent || len(res.body) != 0 {
				t.Fatalf("HTTP %d %q, want 204 without a body", res.status, res.body)
			}
		}},
		{name: "batch_unauthenticated", call: func(map[string]string) rpcCall {
			return rpcCall{body: `[` + rpcBody(1, methodListTasks, nil) + `,` + rpcBody(2, methodGetTask, map[string]any{"id": "x"}) + `]`}
		}, check: func(t *testing.T, res rpcReply) {
			if res.status != http.StatusUnauthorized {
				t.Fatalf("HTTP %d", res.status)
			}
		}},
		{name: "notification", call: func(map[string]string) rpcCall {
			return acme(rpcBody(nil, methodListTasks, map[string]any{}))
		}, check: func(t *testing.T, res rpcReply) {
			if res.status != http.StatusNoContent || len(res.body) != 0 {
				t.Fatalf("HTTP %d %q, want 204 without a body", res.status, res.body)
			}
		}},
	})
}

// TestRPCGoldenStreams records the SSE bytes of both streaming methods over
// a real connection.
func TestRPCGoldenStreams(t *testing.T) {
	t.Run("send_streaming_message_noop", func(t *testing.T) {
		e := newRPCEnv(t)
		srv := httptest.NewServer(e.mux)
		defer srv.Close()
		c := acme(rpcBody(11, methodSendStreamingMessage, map[string]any{"message": rpcMessage("m-s", memstore.FixtureNoop, "stream it")}))
		st := e.openStream(t, context.Background(), srv, c)
		if ct := st.resp.Header.Get("Content-Type"); st.resp.StatusCode != 200 || ct != "text/event-stream" {
			t.Fatalf("HTTP %d %q", st.resp.StatusCode, ct)
		}
		var kinds []string
		for {
			data, err := st.next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			kinds = append(kinds, eventKind(rpcEvent(t, data, "11")))
		}
		if strings.Join(kinds, ",") != "task,artifactUpdate,statusUpdate:TASK_STATE_COMPLETED" {
			t.Fatalf("events %v", kinds)
		}
		res := rpcReply{status: st.resp.StatusCode, header: st.resp.Header, body: st.raw.Bytes()}
		rpcGolden(t, "send_streaming_message_noop", newRPCNormalizer(e.agentR).apply(rpcTranscript(c, res)))
	})
	t.Run("subscribe_to_task", func(t *testing.T) {
		e := newRPCEnv(t)
		v := setupApproval(t, e)
		srv := httptest.NewServer(e.mux)
		defer srv.Close()
		c := acme(rpcBody("sub", methodSubscribeToTask, map[string]any{"id": v["task"]}))
		st := e.openStream(t, context.Background(), srv, c)
		first, err := st.next()
		if err != nil {
			t.Fatal(err)
		}
		if k := eventKind(rpcEvent(t, first, `"sub"`)); k != "task" {
			t.Fatalf("first event %s, want the task", k)
		}
		// The stream stays open on an input-required task; resolving the
		// interrupt moves it on to the end.
		res := e.do(t, acme(rpcBody(2, methodSendMessage, map[string]any{"message": acceptMessage("m-2", v["task"])})))
		rpcTask(t, res, true)
		var kinds []string
		for {
			data, err := st.next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			kinds = append(kinds, eventKind(rpcEvent(t, data, `"sub"`)))
		}
		// The approval run completes with an output and no artifact: the
		// output's artifact goes just before the end.
		if strings.Join(kinds, ",") != "statusUpdate:TASK_STATE_WORKING,artifactUpdate,statusUpdate:TASK_STATE_COMPLETED" {
			t.Fatalf("events after the task %v", kinds)
		}
		out := rpcReply{status: st.resp.StatusCode, header: st.resp.Header, body: st.raw.Bytes()}
		rpcGolden(t, "subscribe_to_task", newRPCNormalizer(e.agentR).apply(rpcTranscript(c, out)))
	})
}

func eventKind(ev wire.Event) string {
	switch v := ev.(type) {
	case *wire.Task:
		return "task"
	case *wire.TaskStatusUpdateEvent:
		return "statusUpdate:" + string(v.Status.State)
	case *wire.TaskArtifactUpdateEvent:
		return "artifactUpdate"
	case *wire.Message:
		return "message"
	}
	return "?"
}

// TestRPCStreamRefusedBeforeFirstEvent: a refusal of a streaming method is
// a plain JSON-RPC error, never a 200 event stream.
func TestRPCStreamRefusedBeforeFirstEvent(t *testing.T) {
	e := newRPCEnv(t)
	for _, body := range []string{
		rpcBody(1, methodSubscribeToTask, map[string]any{"id": "acme/AAAAAAAAAAAAAAAAAAAAAAAAAA"}),
		rpcBody(1, methodSubscribeToTask, map[string]any{"id": "not an id"}),
		rpcBody(1, methodSendStreamingMessage, map[string]any{"message": acceptMessage("m-1", "acme/AAAAAAAAAAAAAAAAAAAAAAAAAA")}),
	} {
		wantRPCError(t, e.do(t, acme(body)), 200, -32001, "TASK_NOT_FOUND")
	}
	res := e.do(t, acme(rpcBody(1, methodSendStreamingMessage, map[string]any{"message": map[string]any{"role": "ROLE_USER", "parts": []any{}}})))
	wantRPCError(t, res, 200, -32602, "")
}

// TestRPCStreamEndsWhenClientLeaves: a subscription on a waiting task ends
// when the client disconnects, and the handler returns.
func TestRPCStreamEndsWhenClientLeaves(t *testing.T) {
	e := newRPCEnv(t)
	v := setupApproval(t, e)
	done := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer close(done)
		e.mux.ServeHTTP(w, r)
	}))
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	st := e.openStream(t, ctx, srv, acme(rpcBody(1, methodSubscribeToTask, map[string]any{"id": v["task"]})))
	if _, err := st.next(); err != nil {
		t.Fatal(err)
	}
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the handler kept streaming after the client left")
	}
}

// TestRPCSSEErrorMidStream: an error after the first event is the final
// event, a JSON-RPC error echoing the id, with the internal text logged
// and never sent.
func TestRPCSSEErrorMidStream(t *testing.T) {
	var logs bytes.Buffer
	e := newRPCEnv(t, func(c *testConfig) { c.Logger = slog.New(slog.NewTextHandler(&logs, nil)) })
	h := e.handler.(*rpcHandler)
	boom := errors.New("store exploded: secret detail")
	seq := func(yield func(wire.Event, error) bool) {
		if !yield(&wire.Task{ID: "acme/AAAAAAAAAAAAAAAAAAAAAAAAAA", ContextID: "c", Status: wire.TaskStatus{State: wire.TaskStateWorking}}, nil) {
			return
		}
		yield(nil, boom)
	}
	rec := httptest.NewRecorder()
	r := httptest.NewRequest(http.MethodPost, rpcPath, nil)
	e.srv.writeEvents(r.Context(), rec, "JSON-RPC stream", methodSubscribeToTask, seq, &rpcFrames{s: e.srv, pool: &h.bufs, b: h.bufs.get(nil), id: []byte(`7`)})
	want := "data: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"task\":{\"id\":\"acme/AAAAAAAAAAAAAAAAAAAAAAAAAA\",\"contextId\":\"c\",\"status\":{\"state\":\"TASK_STATE_WORKING\"}}}}\n\n" +
		"data: {\"jsonrpc\":\"2.0\",\"id\":7,\"error\":{\"code\":-32603,\"message\":\"internal error\",\"data\":[{\"@type\":\"type.googleapis.com/google.rpc.ErrorInfo\",\"reason\":\"INTERNAL_ERROR\",\"domain\":\"a2a-protocol.org\"}]}}\n\n"
	if got := rec.Body.String(); got != want {
		t.Fatalf("stream\n%s\nwant\n%s", got, want)
	}
	if rec.Header().Get("Content-Type") != "text/event-stream" {
		t.Fatalf("Content-Type %q", rec.Header().Get("Content-Type"))
	}
	if l := logs.String(); !strings.Contains(l, "method=SubscribeToTask") || !strings.Contains(l, "secret detail") {
		t.Fatalf("log %q: want the method and the internal error", l)
	}
}
