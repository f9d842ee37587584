package hostapp

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/interop/memstore"
)

const (
	acmeKey   = "demo-acme"
	globexKey = "demo-globex"
)

// testHost is one in-process host on a real listener with the demo tenants.
type testHost struct {
	t       *testing.T
	url     string
	store   *memstore.Store
	client  *http.Client
	logs    *syncBuffer
	drain   context.CancelFunc
	handler *handler
}

type hostOption func(*config)

// newTestHost starts the host on httptest with a real memstore seeded like
// main seeds it. The store may be wrapped by opts (fault injection).
func newTestHost(t *testing.T, opts ...hostOption) *testHost {
	t.Helper()
	return newTestHostOn(t, nil, opts...)
}

// newTestHostOn is newTestHost with tune applied to the http.Server
// before it starts (its timeouts).
func newTestHostOn(t *testing.T, tune func(*http.Server), opts ...hostOption) *testHost {
	t.Helper()
	keys, err := parseKeys(defaultKeys)
	if err != nil {
		t.Fatal(err)
	}
	auth := newBearerKeys(keys)
	store := memstore.New()
	logs := &syncBuffer{}
	drain, startDrain := context.WithCancel(context.Background())
	srv := httptest.NewUnstartedServer(nil)
	base := "http://" + srv.Listener.Addr().String()
	if err := seed(store, auth.Tenants(), base); err != nil {
		t.Fatal(err)
	}
	cfg := config{
		Store:   store,
		Auth:    auth,
		BaseURL: base,
		Logger:  slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Drain:   drain,
		Minter:  auth,
		// The host's own workflows (the a2a seam's, delegate-remote) go
		// where main puts them.
		Workflows: store,
		Tenants:   auth.Tenants(),
	}
	for _, o := range opts {
		o(&cfg)
	}
	h, err := newHandler(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv.Config.Handler = h
	if tune != nil {
		tune(srv.Config)
	}
	srv.Start()
	th := &testHost{t: t, url: srv.URL, store: store, client: srv.Client(), logs: logs, drain: startDrain, handler: h}
	t.Cleanup(func() {
		startDrain()
		srv.Close()
		if err := h.Close(context.Background()); err != nil {
			t.Errorf("handler.Close: %v", err)
		}
		if err := store.Close(); err != nil {
			t.Errorf("store.Close: %v", err)
		}
		if strings.Contains(logs.String(), acmeKey) || strings.Contains(logs.String(), globexKey) {
			t.Errorf("a bearer key reached the log:\n%s", logs.String())
		}
	})
	return th
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// response is a fully read HTTP response.
type response struct {
	Status int
	Header http.Header
	Body   []byte
}

// req describes one request; Body "" sends none.
type req struct {
	Method  string
	Path    string // raw, already escaped as it should go on the wire
	Key     string // bearer key, "" for none
	Body    string
	Type    string // Content-Type; default application/json when Body != ""
	Headers map[string]string
}

func (h *testHost) do(r req) response {
	h.t.Helper()
	var body io.Reader
	if r.Body != "" {
		body = strings.NewReader(r.Body)
	}
	hr, err := http.NewRequest(r.Method, h.url+r.Path, body)
	if err != nil {
		h.t.Fatal(err)
	}
	if r.Body != "" {
		ct := r.Type
		if ct == "" {
			ct = "application/json"
		}
		hr.Header.Set("Content-Type", ct)
	}
	if r.Key != "" {
		hr.Header.Set("Authorization", "Bearer "+r.Key)
	}
	for k, v := range r.Headers {
		hr.Header.Set(k, v)
	}
	resp, err := h.client.Do(hr)
	if err != nil {
		h.t.Fatalf("%s %s: %v", r.Method, r.Path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		h.t.Fatal(err)
	}
	return response{Status: resp.StatusCode, Header: resp.Header, Body: b}
}

func (h *testHost) get(path, key string) response {
	h.t.Helper()
	return h.do(req{Method: "GET", Path: path, Key: key})
}

func (h *testHost) post(path, key, body string) response {
	h.t.Helper()
	return h.do(req{Method: "POST", Path: path, Key: key, Body: body})
}

// decode unmarshals a JSON body into v, failing the test on error.
func decode[T any](t *testing.T, r response) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(r.Body, &v); err != nil {
		t.Fatalf("decode %s: %v", r.Body, err)
	}
	return v
}

// wantStatus fails unless r has status.
func wantStatus(t *testing.T, r response, status int) {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status = %d, want %d; body %s", r.Status, status, r.Body)
	}
}

// wantError checks the exact envelope shape (OpenWOP errors.md §The envelope): status, code, a
// non-empty message, no member but error/message/details, and the
// OpenWOP-Version header every response carries. It returns the details.
func wantError(t *testing.T, r response, status int, code string) map[string]any {
	t.Helper()
	wantStatus(t, r, status)
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q, want application/json", ct)
	}
	if v := r.Header.Get("OpenWOP-Version"); v != "2.0" {
		t.Errorf("OpenWOP-Version = %q, want 2.0", v)
	}
	var env map[string]json.RawMessage
	if err := json.Unmarshal(r.Body, &env); err != nil {
		t.Fatalf("error body is not a JSON object: %s", r.Body)
	}
	for k := range env {
		if k != "error" && k != "message" && k != "details" {
			t.Errorf("envelope has extra member %q: %s", k, r.Body)
		}
	}
	var got struct {
		Error   string         `json:"error"`
		Message string         `json:"message"`
		Details map[string]any `json:"details"`
	}
	if err := json.Unmarshal(r.Body, &got); err != nil {
		t.Fatal(err)
	}
	if got.Error != code {
		t.Errorf("error = %q, want %q; body %s", got.Error, code, r.Body)
	}
	if got.Message == "" {
		t.Errorf("message is empty: %s", r.Body)
	}
	if raw, ok := env["details"]; ok && (len(raw) == 0 || raw[0] != '{') {
		t.Errorf("details is not an object: %s", raw)
	}
	return got.Details
}

// created is a decoded createRun answer.
type created struct {
	RunID     string `json:"runId"`
	Status    string `json:"status"`
	EventsURL string `json:"eventsUrl"`
	StatusURL string `json:"statusUrl"`
}

// start creates a run and returns the answer, requiring 201.
func (h *testHost) start(key, workflowID, inputs string) created {
	h.t.Helper()
	body := `{"workflowId":"` + workflowID + `"}`
	if inputs != "" {
		body = `{"workflowId":"` + workflowID + `","inputs":` + inputs + `}`
	}
	r := h.post("/runs", key, body)
	wantStatus(h.t, r, http.StatusCreated)
	return decode[created](h.t, r)
}

// snapshot is a decoded RunSnapshot.
type snapshot struct {
	RunID      string `json:"runId"`
	WorkflowID string `json:"workflowId"`
	Status     string `json:"status"`
	CreatedAt  string `json:"createdAt"`
	UpdatedAt  string `json:"updatedAt"`
	Interrupts []struct {
		InterruptID string   `json:"interruptId"`
		Kind        string   `json:"kind"`
		Key         string   `json:"key"`
		NodeID      string   `json:"nodeId"`
		Message     string   `json:"message"`
		Actions     []string `json:"actions"`
		ResolveURL  string   `json:"resolveUrl"`
	} `json:"interrupts"`
	Artifacts []struct {
		ArtifactID string `json:"artifactId"`
		Parts      []struct {
			Kind string `json:"kind"`
		} `json:"parts"`
	} `json:"artifacts"`
	Outputs json.RawMessage `json:"outputs"`
	Error   *struct {
		Message string `json:"message"`
	} `json:"error"`
}

// poll is a decoded pollRunEvents answer.
type poll struct {
	RunID        string      `json:"runId"`
	Events       []pollEvent `json:"events"`
	LastSequence int64       `json:"lastSequence"`
	Status       string      `json:"status"`
	IsTerminal   bool        `json:"isTerminal"`
}

// pollEvent is one RunEventDoc of a poll answer.
type pollEvent struct {
	EventID       string          `json:"eventId"`
	RunID         string          `json:"runId"`
	Sequence      int64           `json:"sequence"`
	Type          string          `json:"type"`
	NodeID        string          `json:"nodeId"`
	Timestamp     string          `json:"timestamp"`
	SchemaVersion int             `json:"schemaVersion"`
	Payload       json.RawMessage `json:"payload"`
}

// str is the string member key of the event's payload ("" when absent);
// key may name a member of a nested object as "error.code".
func (e pollEvent) str(key string) string {
	var v any
	_ = json.Unmarshal(e.Payload, &v)
	for _, k := range strings.Split(key, ".") {
		m, _ := v.(map[string]any)
		v = m[k]
	}
	s, _ := v.(string)
	return s
}

// waitStatus long-polls the run's events until its status is one of want,
// and returns the last poll answer.
func (h *testHost) waitStatus(key, runPath string, want ...string) poll {
	h.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	after := int64(-1)
	for time.Now().Before(deadline) {
		r := h.get(runPath+"/events/poll?timeout=1&afterSequence="+itoa(after), key)
		wantStatus(h.t, r, http.StatusOK)
		p := decode[poll](h.t, r)
		if slices.Contains(want, p.Status) {
			return p
		}
		after = p.LastSequence
	}
	h.t.Fatalf("run %s never reached %v", runPath, want)
	return poll{}
}

func itoa(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// faultStore wraps a real store and fails the methods named in fail with an
// error whose text must never reach a caller.
type faultStore struct {
	hostStore
	fail map[string]bool
}

type secretError struct{}

func (*secretError) Error() string { return "db exploded at 10.0.0.7: password=hunter2" }

func (f faultStore) GetRun(ctx context.Context, s interop.Subject, id string) (interop.Run, error) {
	if f.fail["GetRun"] {
		return interop.Run{}, &secretError{}
	}
	return f.hostStore.GetRun(ctx, s, id)
}

func (f faultStore) ListAgents(ctx context.Context, s interop.Subject) ([]interop.Agent, error) {
	if f.fail["ListAgents"] {
		return nil, &secretError{}
	}
	return f.hostStore.ListAgents(ctx, s)
}

func withFaults(methods ...string) hostOption {
	return func(c *config) {
		fail := map[string]bool{}
		for _, m := range methods {
			fail[m] = true
		}
		c.Store = faultStore{hostStore: c.Store, fail: fail}
	}
}
