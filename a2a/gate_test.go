package a2a

import (
	"testing"

	"github.com/wopinterop/wopinterop/mapping"
)

func TestGateRefusesRowsWhoseFacetIsOff(t *testing.T) {
	m := mapping.Builtin()
	errs, err := newErrorTable(m)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		caps   Capabilities
		method string
		code   int // 0 = allowed
	}{
		{Capabilities{}, methodSendMessage, 0},
		{Capabilities{}, methodGetTask, 0},
		{Capabilities{}, methodListTasks, 0},
		{Capabilities{}, methodCancelTask, 0},
		{Capabilities{}, methodGetExtendedAgentCard, 0},
		{Capabilities{}, methodSendStreamingMessage, -32004},
		{Capabilities{Streaming: true}, methodSendStreamingMessage, 0},
		{Capabilities{}, methodSubscribeToTask, -32004},
		{Capabilities{Streaming: true}, methodSubscribeToTask, -32004},
		{Capabilities{Streaming: true, DurableTasks: true}, methodSubscribeToTask, 0},
		{Capabilities{}, methodCreatePushConfig, -32003},
		{Capabilities{}, methodGetPushConfig, -32003},
		{Capabilities{}, methodListPushConfigs, -32003},
		{Capabilities{}, methodDeletePushConfig, -32003},
		{Capabilities{PushNotifications: true}, methodGetPushConfig, 0},
		{Capabilities{Streaming: true, DurableTasks: true, PushNotifications: true}, "tasks/get", codeMethodNotFound},
	}
	for _, c := range cases {
		s := &Server{cfg: Config{Capabilities: c.caps}, m: m, errs: errs}
		err := s.gate(c.method)
		got := 0
		if err != nil {
			got = asError(err).Code
		}
		if got != c.code {
			t.Errorf("%s with %+v: code %d, want %d", c.method, c.caps, got, c.code)
		}
	}
}
