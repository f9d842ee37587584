package workunit_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	wire "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	"github.com/a2aproject/a2a-go/v2/a2aext"

	"github.com/wopinterop/wopinterop/workunit"
)

// bearer puts the test host's key on every call.
type bearer struct {
	a2aclient.PassthroughInterceptor
}

func (bearer) Before(ctx context.Context, req *a2aclient.Request) (context.Context, any, error) {
	req.ServiceParams["authorization"] = []string{"Bearer " + hostKey}
	return ctx, nil, nil
}

// forceExtension requests the extension whatever the card says, as a
// client that does not read cards would.
type forceExtension struct {
	a2aclient.PassthroughInterceptor
}

func (forceExtension) Before(ctx context.Context, req *a2aclient.Request) (context.Context, any, error) {
	req.ServiceParams.Append(wire.SvcParamExtensions, workunit.ExtensionURI)
	return ctx, nil, nil
}

// a2aPeer is a2a-go's client for one binding of h, resolved from its card
// and logging the A2A-Extensions headers of every exchange.
type a2aPeer struct {
	client *a2aclient.Client
	card   *wire.AgentCard
	log    *exchangeLog
}

func newA2APeer(t *testing.T, h *a2aHost, binding wire.TransportProtocol, interceptors ...a2aclient.CallInterceptor) *a2aPeer {
	t.Helper()
	log := &exchangeLog{base: http.DefaultTransport}
	hc := &http.Client{Transport: log}
	card, err := agentcard.NewResolver(hc).Resolve(t.Context(), h.url)
	if err != nil {
		t.Fatal(err)
	}
	opts := []a2aclient.FactoryOption{
		a2aclient.WithDefaultsDisabled(),
		a2aclient.WithConfig(a2aclient.Config{PreferredTransports: []wire.TransportProtocol{binding}, DisableTenantPropagation: true}),
		a2aclient.WithCallInterceptors(append([]a2aclient.CallInterceptor{bearer{}}, interceptors...)...),
	}
	if binding == wire.TransportProtocolJSONRPC {
		opts = append(opts, a2aclient.WithJSONRPCTransport(hc))
	} else {
		opts = append(opts, a2aclient.WithRESTTransport(hc))
	}
	c, err := a2aclient.NewFromCard(t.Context(), card, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Destroy() })
	return &a2aPeer{client: c, card: card, log: log}
}

// send starts a review with the parts given, the message listing the
// extension.
func (p *a2aPeer) send(t *testing.T, parts ...*wire.Part) (*wire.Task, error) {
	t.Helper()
	m := wire.NewMessage(wire.MessageRoleUser, append([]*wire.Part{wire.NewTextPart("please review")}, parts...)...)
	workunit.Activate(m)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	res, err := p.client.SendMessage(ctx, &wire.SendMessageRequest{Message: m})
	if err != nil {
		return nil, err
	}
	task, ok := res.(*wire.Task)
	if !ok {
		t.Fatalf("SendMessage answered %T", res)
	}
	return task, nil
}

var bindings = []wire.TransportProtocol{wire.TransportProtocolJSONRPC, wire.TransportProtocolHTTPJSON}

// The unit goes from a2a-go's client through our A2A server to the host
// byte for byte: the card declares the extension, a2aext's activator
// requests it, the host receives the activation with the message and
// opens the exact bytes, the response echoes the activation, and the
// result unit the host returns in an artifact turns the pending
// completion into an accepted one. Both bindings.
func TestA2ARoundTripWithA2AGo(t *testing.T) {
	h := newA2AHost(t, true)
	sent := mustSeal(t, sample)
	for _, binding := range bindings {
		t.Run(string(binding), func(t *testing.T) {
			p := newA2APeer(t, h, binding, a2aext.NewActivator(workunit.ExtensionURI))
			if !workunit.Declared(p.card) {
				t.Fatalf("the card does not declare the extension: %+v", p.card.Capabilities)
			}
			task, err := p.send(t, sent.A2APart())
			if err != nil || task.Status.State != wire.TaskStateCompleted {
				t.Fatalf("SendMessage: %+v %v", task, err)
			}
			// The host received exactly the bytes sealed.
			req := h.host.last(t)
			got, err := workunit.FromMessage(req.Message)
			if err != nil || !bytes.Equal(got.Canonical(), sent.Canonical()) || got.Digest() != sent.Digest() {
				t.Fatalf("the host opened %q (%v)", got.Canonical(), err)
			}
			if !slices.Equal(req.Message.ActivatedExtensions, []string{workunit.ExtensionURI}) || !slices.Contains(req.Message.Extensions, workunit.ExtensionURI) {
				t.Fatalf("activated %q, extensions %q", req.Message.ActivatedExtensions, req.Message.Extensions)
			}
			requested, echoed := p.log.lastExchange()
			if !workunit.Activated(requested) || !slices.Equal(echoed, []string{workunit.ExtensionURI}) {
				t.Fatalf("requested %q, echoed %q", requested, echoed)
			}

			// Remote completion is pending until the result verifies.
			completion := workunit.RemoteCompleted(sent)
			if completion.Acceptance() != workunit.PendingVerification || len(task.Artifacts) != 1 {
				t.Fatalf("completion %+v, artifacts %+v", completion, task.Artifacts)
			}
			result, err := workunit.FromA2A(task.Artifacts[0].Parts, echoed)
			if err != nil || result.Unit().Kind != verdictKind || string(result.Unit().Body) != string(verdict) {
				t.Fatalf("result: %+v %v", result.Unit(), err)
			}
			accepted, err := completion.Verify(result)
			if err != nil || accepted.Acceptance() != workunit.Accepted || accepted.Result() != result.Digest() {
				t.Fatalf("Verify: %+v %v", accepted, err)
			}
		})
	}
}

// A one-byte change anywhere — every byte of the canonical bytes, every
// character of the digest — fails closed at the host: the SendMessage is
// refused with invalid params naming the reason, and no run exists.
// Exhaustively on JSON-RPC, at both ends of each on HTTP+JSON.
func TestA2AOneByteChangeFailsClosed(t *testing.T) {
	h := newA2AHost(t, true)
	sent := mustSeal(t, sample)
	canonical, digest := sent.Canonical(), sent.Digest()
	for _, binding := range bindings {
		t.Run(string(binding), func(t *testing.T) {
			p := newA2APeer(t, h, binding, a2aext.NewActivator(workunit.ExtensionURI))
			bytesAt, digitsAt := allIndexes(len(canonical)), allIndexes(len(digest))
			if binding == wire.TransportProtocolHTTPJSON {
				bytesAt, digitsAt = []int{0, len(canonical) / 2, len(canonical) - 1}, []int{0, len(digest) - 1}
			}
			refused := func(what string, part *wire.Part) {
				t.Helper()
				before := h.host.runs(t)
				task, err := p.send(t, part)
				if err == nil || !strings.Contains(err.Error(), "the task's inputs were refused: workunit: digest mismatch: the unit's bytes do not hash to its digest") {
					t.Fatalf("%s: %+v %v", what, task, err)
				}
				if after := h.host.runs(t); after != before {
					t.Fatalf("%s: a refused unit created a run (%d → %d)", what, before, after)
				}
			}
			for _, i := range bytesAt {
				changed := sent.A2APart()
				changed.Content.(wire.Raw)[i] ^= 0x01
				refused("byte "+strconv.Itoa(i), changed)
			}
			for _, i := range digitsAt {
				changed := sent.A2APart()
				d := []byte(digest)
				d[i] = "01"[boolInt(d[i] == '0')]
				changed.Metadata[workunit.ExtensionURI].(map[string]any)["sha256"] = string(d)
				refused("digest character "+strconv.Itoa(i), changed)
			}
		})
	}
}

// Missing activation fails closed, however it comes about: a client that
// does not request the extension, an agent that does not declare it
// (a2aext's activator then requests nothing), a request naming it to an
// agent that does not declare it (the server activates nothing). The
// unit is never opened and no run starts.
func TestA2AMissingActivationFailsClosed(t *testing.T) {
	declaring, silent := newA2AHost(t, true), newA2AHost(t, false)
	sent := mustSeal(t, sample)
	for _, tc := range []struct {
		name         string
		host         *a2aHost
		interceptors []a2aclient.CallInterceptor
	}{
		{"the client does not request it", declaring, nil},
		{"the card does not declare it", silent, []a2aclient.CallInterceptor{a2aext.NewActivator(workunit.ExtensionURI)}},
		{"requested from an agent that does not declare it", silent, []a2aclient.CallInterceptor{forceExtension{}}},
	} {
		for _, binding := range bindings {
			t.Run(tc.name+"/"+string(binding), func(t *testing.T) {
				p := newA2APeer(t, tc.host, binding, tc.interceptors...)
				before := tc.host.host.runs(t)
				task, err := p.send(t, sent.A2APart())
				want := "the task's inputs were refused: workunit: extension not activated: the exchange did not activate " + workunit.ExtensionURI
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Fatalf("%+v %v\nwant %s", task, err, want)
				}
				if after := tc.host.host.runs(t); after != before {
					t.Fatalf("a run started (%d → %d)", before, after)
				}
				if _, echoed := p.log.lastExchange(); len(echoed) != 0 {
					t.Fatalf("echoed %q", echoed)
				}
			})
		}
	}
}

// The refusal in the binding's own shape, whole body: JSON-RPC -32602
// with its ErrorInfo and the field that was refused.
func TestA2ARefusalShape(t *testing.T) {
	h := newA2AHost(t, true)
	sent := mustSeal(t, sample)
	part := sent.A2APart()
	part.Content.(wire.Raw)[0] = '['
	m := wire.NewMessage(wire.MessageRoleUser, part)
	m.ID = "m-tampered"
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": map[string]any{"message": m}})
	if err != nil {
		t.Fatal(err)
	}
	r, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, h.url+"/rpc", bytes.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("A2A-Version", "1.0")
	r.Header.Set("Authorization", "Bearer "+hostKey)
	workunit.ActivateHeader(r.Header)
	res, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	got, _ := io.ReadAll(res.Body)
	want := `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"the task's inputs were refused: workunit: digest mismatch: the unit's bytes do not hash to its digest","data":[{"@type":"type.googleapis.com/google.rpc.BadRequest","fieldViolations":[{"field":"message.parts","description":"the task's inputs were refused: workunit: digest mismatch: the unit's bytes do not hash to its digest"}]}]}}`
	if res.StatusCode != http.StatusOK || string(got) != want || res.Header.Get("A2A-Extensions") != workunit.ExtensionURI {
		t.Fatalf("%d %q\n%s\nwant %s", res.StatusCode, res.Header.Get("A2A-Extensions"), got, want)
	}
}

func allIndexes(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
