package a2a

import (
	"encoding/json"
	"regexp"
	"testing"

	"github.com/wopinterop/wopinterop/internal/tracecontext"

	wire "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/wopinterop/wopinterop/interop"
)

// FuzzCoreTraceParent checks the hand-written traceparent check against
// the W3C grammar written as a regular expression (OpenWOP interop.md §Trace context).
func FuzzCoreTraceParent(f *testing.F) {
	for _, seed := range []string{
		"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
		"ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
		"00-00000000000000000000000000000000-00f067aa0ba902b7-01",
		"00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
		"00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
		"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
		"", "00", "garbage",
	} {
		f.Add(seed)
	}
	grammar := regexp.MustCompile(`^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$`)
	f.Fuzz(func(t *testing.T, v string) {
		want := grammar.MatchString(v) && v[:2] != "ff" &&
			v[3:35] != "00000000000000000000000000000000" && v[36:52] != "0000000000000000"
		if got := tracecontext.ValidParent(v); got != want {
			t.Fatalf("tracecontext.ValidParent(%q) = %v, want %v", v, got, want)
		}
	})
}

// FuzzCoreInboundMessage feeds decoded messages through the checks and
// conversions a SendMessage takes: nothing panics, an accepted message
// converts to well-formed host parts, and a resume value is JSON.
func FuzzCoreInboundMessage(f *testing.F) {
	for _, seed := range []string{
		`{"messageId":"m","role":"ROLE_USER","parts":[{"text":"hi"}]}`,
		`{"messageId":"m","role":"ROLE_USER","taskId":"acme/x","parts":[{"data":{"action":"accept"}}],"metadata":{"openwop":{"interrupt":{"action":"accept"}}}}`,
		`{"messageId":"m","role":"ROLE_AGENT","parts":[{"url":"https://x.example/f","filename":"f"},{"raw":"AAE="}]}`,
		`{"messageId":"m","role":"ROLE_USER","parts":[{"data":[1,2]},{"text":"a"}],"metadata":{"openwop":{"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01","tracestate":"a=1"}}}`,
		`{"messageId":"","role":"ROLE_X","parts":[]}`,
	} {
		f.Add([]byte(seed))
	}
	s := projectServer(f)
	f.Fuzz(func(t *testing.T, raw []byte) {
		var m wire.Message
		if json.Unmarshal(raw, &m) != nil {
			return
		}
		in, err := s.checkSend(&wire.SendMessageRequest{Message: &m})
		if err != nil {
			if e := asError(err); e.Code != -32602 || e.Field == "" {
				t.Fatalf("refusal %+v is not a -32602 naming a field", e)
			}
			return
		}
		for i, p := range in.host.Parts {
			switch p.Kind {
			case interop.PartText, interop.PartRaw:
			case interop.PartURL:
				if p.URL == "" {
					t.Fatalf("part %d: empty url accepted", i)
				}
			case interop.PartData:
				if !json.Valid(p.Data) {
					t.Fatalf("part %d: data %q is not JSON", i, p.Data)
				}
			default:
				t.Fatalf("part %d: kind %q", i, p.Kind)
			}
		}
		if in.host.Role != interop.RoleUser && in.host.Role != interop.RoleAgent {
			t.Fatalf("role %q", in.host.Role)
		}
		for _, kind := range []interop.InterruptKind{interop.InterruptApproval, interop.InterruptClarification} {
			value, _, err := resumeValue(&m, &interop.Interrupt{Kind: kind, Actions: []string{"accept", "reject"}})
			if err == nil && value != nil && !json.Valid(value) {
				t.Fatalf("resume value %q is not JSON", value)
			}
		}
		tc := traceOf(&call{}, &m)
		if tc.TraceParent != "" && !tracecontext.ValidParent(tc.TraceParent) || tc.TraceParent == "" && tc.TraceState != "" {
			t.Fatalf("trace context %+v", tc)
		}
	})
}
