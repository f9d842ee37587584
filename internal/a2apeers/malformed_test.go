package a2apeers

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	wire "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/wopinterop/wopinterop/internal/golden"
)

// TestMalformedWire: each mode's exact answer to a call, golden
// (testdata/malformed/<Mode>.txt; the Oversized body is summarised).
func TestMalformedWire(t *testing.T) {
	for _, m := range Modes {
		t.Run(m.String(), func(t *testing.T) {
			p := StartMalformed(t, m)
			endpoint := p.Card.SupportedInterfaces[0].URL
			if m == ProblemJSON {
				endpoint += "/message:send"
			}
			res, body := post(t, endpoint, `{"jsonrpc":"2.0","id":"golden-1","method":"SendMessage","params":{}}`)
			if m != MissingFields && !strings.Contains(body, BodyMarker) {
				t.Errorf("body lacks BodyMarker: %.300s", body)
			}
			if m == Oversized {
				if len(body) < OversizedBytes {
					t.Fatalf("Oversized body is %d bytes, want more than %d", len(body), OversizedBytes)
				}
				body = fmt.Sprintf("%s…(%d bytes)…%s", body[:200], len(body), body[len(body)-40:])
			}
			var b strings.Builder
			fmt.Fprintf(&b, "%d\nContent-Type: %s\n", res.StatusCode, res.Header.Get("Content-Type"))
			if v := res.Header.Get("WWW-Authenticate"); v != "" {
				fmt.Fprintf(&b, "WWW-Authenticate: %s\n", v)
			}
			fmt.Fprintf(&b, "\n%s\n", body)
			golden.Check(t, "malformed/"+m.String()+".txt", []byte(b.String()))
			if calls := p.Calls(); len(calls) != 1 || calls[0].Method != "SendMessage" {
				t.Fatalf("recorded %+v, want the one call", calls)
			}
		})
	}
}

// TestMalformedStockClient documents what a2a-go v2.4.0's stock client
// makes of each mode: a body it cannot read is an
// untyped error (not InvalidAgentResponse) whose text may carry the peer's
// bytes; a task missing required fields and an oversized body are
// accepted; a legacy data object or a non-200 body loses the error's code;
// a peer's ErrorInfo reason and non-string metadata are dropped. Hence the
// host's own transport.
func TestMalformedStockClient(t *testing.T) {
	untyped := func(err error) bool { var ae *wire.Error; return err != nil && !errors.As(err, &ae) }
	reason := func(err error) string {
		var ae *wire.Error
		if !errors.As(err, &ae) || ae.ErrorInfo() == nil {
			return ""
		}
		r, _ := ae.ErrorInfo().Value["reason"].(string)
		return r
	}
	metadata := func(err error) any {
		var ae *wire.Error
		if !errors.As(err, &ae) || ae.ErrorInfo() == nil {
			return nil
		}
		return ae.ErrorInfo().Value["metadata"]
	}
	leaks := func(err error) bool { return err != nil && strings.Contains(err.Error(), BodyMarker) }
	cases := []struct {
		mode  Mode
		check func(res wire.SendMessageResult, err error) bool
		want  string
	}{
		{InvalidJSON, func(_ wire.SendMessageResult, err error) bool {
			return untyped(err) && !errors.Is(err, wire.ErrInvalidAgentResponse)
		},
			"an untyped decode error, not InvalidAgentResponse"},
		{WrongShape, func(_ wire.SendMessageResult, err error) bool { return untyped(err) && leaks(err) },
			"an untyped error whose text carries the peer's body"},
		{MissingFields, func(res wire.SendMessageResult, err error) bool {
			task, ok := res.(*wire.Task)
			return err == nil && ok && task.ID == "" && task.Status.State == wire.TaskStateCompleted
		}, "accepted: a completed task with no id"},
		{UnknownKind, func(_ wire.SendMessageResult, err error) bool { return untyped(err) && leaks(err) },
			"an untyped error whose text carries the peer's body"},
		{MalformedSSE, func(_ wire.SendMessageResult, err error) bool { return untyped(err) },
			"an untyped decode error"},
		{Oversized, func(res wire.SendMessageResult, err error) bool {
			task, ok := res.(*wire.Task)
			return err == nil && ok && len(task.Artifacts) == 1 && len(task.Artifacts[0].Parts[0].Text()) == OversizedBytes
		}, "accepted whole: no cap on a response body"},
		{LegacyErrorData, func(_ wire.SendMessageResult, err error) bool {
			return untyped(err) && !errors.Is(err, wire.ErrTaskNotFound)
		},
			"the whole response fails to decode; -32001 is lost"},
		{ErrorDataMixed, func(_ wire.SendMessageResult, err error) bool {
			return errors.Is(err, wire.ErrTaskNotFound) && leaks(err) &&
				fmt.Sprint(metadata(err)) == "map[taskId:task-mixed]"
		}, "TaskNotFound, its text the peer's message, non-string metadata dropped"},
		{UnknownReason, func(_ wire.SendMessageResult, err error) bool {
			return errors.Is(err, wire.ErrInternalError) && reason(err) == "INTERNAL_ERROR"
		}, "InternalError with the reason rewritten from UNKNOWN_ERROR to INTERNAL_ERROR"},
		{VersionNotSupported, func(_ wire.SendMessageResult, err error) bool {
			return errors.Is(err, wire.ErrVersionNotSupported) && fmt.Sprint(metadata(err)) == "map[supportedVersions:0.3]"
		}, "VersionNotSupported with supportedVersions"},
		{HTTP500, func(_ wire.SendMessageResult, err error) bool {
			return untyped(err) && !errors.Is(err, wire.ErrInternalError)
		},
			"an untyped status error; the JSON-RPC body is ignored"},
		{HTTP401, func(_ wire.SendMessageResult, err error) bool {
			return untyped(err) && !errors.Is(err, wire.ErrUnauthenticated)
		},
			"an untyped status error; the JSON-RPC body is ignored"},
		{ProblemJSON, func(_ wire.SendMessageResult, err error) bool {
			return errors.Is(err, wire.ErrServerError) && err.Error() == "server error"
		}, "a bare ServerError: the 403 and the problem detail are lost"},
	}
	if len(cases) != len(Modes) {
		t.Fatalf("%d cases for %d modes", len(cases), len(Modes))
	}
	for _, tc := range cases {
		t.Run(tc.mode.String(), func(t *testing.T) {
			p := StartMalformed(t, tc.mode)
			c := newClient(t, p, p.Card.SupportedInterfaces[0].ProtocolBinding)
			res, err := c.SendMessage(callCtx(t), sendText(Complete))
			if !tc.check(res, err) {
				t.Fatalf("a2a-go's client: result %T, error %.300v; documented: %s", res, err, tc.want)
			}
		})
	}
}

// TestMalformedStockClientStreams: what a2a-go's client makes of a stream
// from a malformed peer: the valid event, then a parse error; a JSON body
// where SSE was due ends the stream silently, with no event and no error.
func TestMalformedStockClientStreams(t *testing.T) {
	cases := []struct {
		mode Mode
		want string
	}{
		{MalformedSSE, "task TASK_STATE_WORKING|error: failed to parse SSE data"},
		{InvalidJSON, ""},
		{VersionNotSupported, ""},
		{Oversized, ""}, // one 9 MiB line, under the client's 10 MB SSE line cap
		{HTTP500, "error: unexpected HTTP status: 500 Internal Server Error"},
	}
	for _, tc := range cases {
		t.Run(tc.mode.String(), func(t *testing.T) {
			c := newClient(t, StartMalformed(t, tc.mode), wire.TransportProtocolJSONRPC)
			var got []string
			for e, err := range c.SendStreamingMessage(callCtx(t), sendText(Complete)) {
				if err != nil {
					msg, _, _ := strings.Cut(err.Error(), ": unexpected end")
					got = append(got, "error: "+msg)
					break
				}
				got = append(got, eventLine(e))
			}
			if strings.Join(got, "|") != tc.want {
				t.Fatalf("stream %q, documented %q", got, tc.want)
			}
		})
	}
}

// TestMalformedCard: the card is valid A2A 1.0 whatever the mode, with one
// interface of the binding the mode answers on.
func TestMalformedCard(t *testing.T) {
	for _, m := range []Mode{InvalidJSON, ProblemJSON} {
		p := StartMalformed(t, m)
		res, body := get(t, p.CardURL)
		if res.StatusCode != http.StatusOK || body != string(p.CardJSON) {
			t.Fatalf("%v card: %d %s", m, res.StatusCode, body)
		}
		want := wire.TransportProtocolJSONRPC
		if m == ProblemJSON {
			want = wire.TransportProtocolHTTPJSON
		}
		if ifs := p.Card.SupportedInterfaces; len(ifs) != 1 || ifs[0].ProtocolBinding != want || ifs[0].ProtocolVersion != "1.0" {
			t.Fatalf("%v interfaces %+v, want one %s 1.0", m, ifs, want)
		}
	}
}
