package hostapp

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/interop/memstore"
	"github.com/wopinterop/wopinterop/isolation"
)

// projected and encoded are the two path forms of a bound id (OpenWOP identity.md §5).
func projected(id string) string { return "/runs/" + isolation.Project(id) }
func encoded(id string) string   { return "/runs/" + strings.Replace(id, "/", "%2F", 1) }

func TestCreateRunAnswer(t *testing.T) {
	h := newTestHost(t)
	r := h.post("/runs", acmeKey, `{"workflowId":"conformance-noop","inputs":{"message":"hi"}}`)
	wantStatus(t, r, http.StatusCreated)
	c := decode[created](t, r)
	if !isolation.ValidBound(c.RunID) || isolation.TenantOf(c.RunID) != "acme" {
		t.Fatalf("runId %q is not a bound acme id", c.RunID)
	}
	if c.Status != "running" && c.Status != "completed" {
		t.Errorf("status = %q", c.Status)
	}
	wantStatusURL := h.url + "/runs/" + isolation.Project(c.RunID)
	if c.StatusURL != wantStatusURL || c.EventsURL != wantStatusURL+"/events/poll" {
		t.Errorf("urls = %q, %q; want the projected id under %q", c.StatusURL, c.EventsURL, wantStatusURL)
	}
	if strings.Contains(c.StatusURL, "%2F") || !strings.Contains(c.StatusURL, "~2F") {
		t.Errorf("statusUrl %q does not carry the projected id", c.StatusURL)
	}
	if got := r.Header.Get("Location"); got != wantStatusURL {
		t.Errorf("Location = %q, want %q", got, wantStatusURL)
	}
	if r.Header.Get("OpenWOP-Idempotent-Replay") != "" {
		t.Error("a fresh run is marked as an idempotent replay")
	}
	// The links work as given.
	p := h.waitStatus(acmeKey, strings.TrimPrefix(c.StatusURL, h.url), "completed")
	if p.RunID != c.RunID {
		t.Errorf("poll runId = %q, want %q", p.RunID, c.RunID)
	}
}

func TestGetRunBothIDForms(t *testing.T) {
	h := newTestHost(t)
	c := h.start(acmeKey, memstore.FixtureNoop, "")
	h.waitStatus(acmeKey, projected(c.RunID), "completed")

	byProjected := h.get(projected(c.RunID), acmeKey)
	byEncoded := h.get(encoded(c.RunID), acmeKey)
	wantStatus(t, byProjected, http.StatusOK)
	wantStatus(t, byEncoded, http.StatusOK)
	if !bytes.Equal(byProjected.Body, byEncoded.Body) {
		t.Errorf("the two id forms answer differently:\n%s\n%s", byProjected.Body, byEncoded.Body)
	}
	s := decode[snapshot](t, byProjected)
	if s.RunID != c.RunID {
		t.Errorf("body runId = %q, want the bound %q", s.RunID, c.RunID)
	}
	if s.WorkflowID != memstore.FixtureNoop || s.Status != "completed" {
		t.Errorf("snapshot = %+v", s)
	}
	if len(s.Artifacts) != 1 || s.Artifacts[0].ArtifactID != memstore.FixtureArtifactID {
		t.Errorf("artifacts = %+v", s.Artifacts)
	}
	if string(s.Outputs) != `{"ok":true}` {
		t.Errorf("outputs = %s", s.Outputs)
	}
	if s.Error != nil || len(s.Interrupts) != 0 {
		t.Errorf("completed run shows error or interrupts: %s", byProjected.Body)
	}
	for _, ts := range []string{s.CreatedAt, s.UpdatedAt} {
		if _, err := time.Parse(time.RFC3339Nano, ts); err != nil || !strings.HasSuffix(ts, "Z") {
			t.Errorf("timestamp %q is not RFC 3339 UTC", ts)
		}
	}
}

func TestGetRunETag(t *testing.T) {
	h := newTestHost(t)
	c := h.start(acmeKey, memstore.FixtureNoop, "")
	h.waitStatus(acmeKey, projected(c.RunID), "completed")
	r := h.get(projected(c.RunID), acmeKey)
	etag := r.Header.Get("ETag")
	if !strings.HasPrefix(etag, `"`) || len(etag) < 4 {
		t.Fatalf("ETag = %q, want a strong validator", etag)
	}
	for _, inm := range []string{etag, "W/" + etag, `"other", ` + etag, "*"} {
		nm := h.do(req{Method: "GET", Path: encoded(c.RunID), Key: acmeKey, Headers: map[string]string{"If-None-Match": inm}})
		wantStatus(t, nm, http.StatusNotModified)
		if len(nm.Body) != 0 || nm.Header.Get("OpenWOP-Version") != "2.0" || nm.Header.Get("ETag") != etag {
			t.Errorf("If-None-Match %s: 304 with body %q, headers %v", inm, nm.Body, nm.Header)
		}
	}
	stale := h.do(req{Method: "GET", Path: projected(c.RunID), Key: acmeKey, Headers: map[string]string{"If-None-Match": `"stale"`}})
	wantStatus(t, stale, http.StatusOK)

	// The validator changes with the run: a suspended run's tag differs
	// once it is resolved.
	a := h.start(acmeKey, memstore.FixtureApproval, "")
	h.waitStatus(acmeKey, projected(a.RunID), "waiting-approval")
	before := h.get(projected(a.RunID), acmeKey).Header.Get("ETag")
	s := decode[snapshot](t, h.get(projected(a.RunID), acmeKey))
	wantStatus(t, h.post(strings.TrimPrefix(s.Interrupts[0].ResolveURL, h.url), acmeKey, `{"resumeValue":{"action":"accept"}}`), http.StatusOK)
	h.waitStatus(acmeKey, projected(a.RunID), "completed")
	after := h.get(projected(a.RunID), acmeKey)
	if after.Header.Get("ETag") == before {
		t.Error("ETag did not change when the run changed")
	}
	wantStatus(t, h.do(req{Method: "GET", Path: projected(a.RunID), Key: acmeKey, Headers: map[string]string{"If-None-Match": before}}), http.StatusOK)
}

func TestRunPathRefusals(t *testing.T) {
	h := newTestHost(t)
	c := h.start(acmeKey, memstore.FixtureNoop, "")
	_, opaque, _ := isolation.Split(c.RunID)
	never := h.get(projected("acme/"+strings.Repeat("Z", 26)), acmeKey)
	wantError(t, never, http.StatusNotFound, codeNotFound)

	tests := []struct {
		name, path, key string
		status          int
		code, field     string
	}{
		{"foreign tenant, projected", projected(c.RunID), globexKey, 403, codeTenantMismatch, "runId"},
		{"foreign tenant, percent-encoded", encoded(c.RunID), globexKey, 403, codeTenantMismatch, "runId"},
		{"bare opaque id", "/runs/" + opaque, acmeKey, 400, codeValidation, "runId"},
		{"not an id", "/runs/nope", acmeKey, 400, codeValidation, "runId"},
		{"double-encoded slash", "/runs/acme%252F" + opaque, acmeKey, 400, codeValidation, "runId"},
		{"broken projection", "/runs/acme~2Z" + opaque, acmeKey, 400, codeValidation, "runId"}, // "~2" then a non-hex digit
		{"short opaque", "/runs/acme~2Fabc", acmeKey, 400, codeValidation, "runId"},
		{"unknown id", projected("acme/" + strings.Repeat("A", 26)), acmeKey, 404, codeNotFound, ""},
		// globex naming acme's opaque under its own tenant finds nothing:
		// the store starts from the caller's tenant.
		{"own tenant, foreign opaque", projected("globex/" + opaque), globexKey, 404, codeNotFound, ""},
		{"no credential", projected(c.RunID), "", 401, codeUnauthenticated, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := h.get(tt.path, tt.key)
			d := wantError(t, r, tt.status, tt.code)
			if tt.field != "" && d["field"] != tt.field {
				t.Errorf("details.field = %v, want %q", d["field"], tt.field)
			}
			if tt.status == 404 && !bytes.Equal(r.Body, never.Body) {
				t.Errorf("404 body %s differs from a never-existing id's %s", r.Body, never.Body)
			}
			if tt.status == 403 && strings.Contains(string(r.Body), "globex") {
				t.Errorf("403 names a tenant: %s", r.Body)
			}
		})
	}
}

func TestCreateRunIdempotency(t *testing.T) {
	h := newTestHost(t)
	send := func(key, idem string) response {
		return h.do(req{Method: "POST", Path: "/runs", Key: key, Body: `{"workflowId":"conformance-noop"}`,
			Headers: map[string]string{"Idempotency-Key": idem}})
	}
	first := send(acmeKey, "order-42")
	wantStatus(t, first, http.StatusCreated)
	again := send(acmeKey, "order-42")
	wantStatus(t, again, http.StatusOK)
	a, b := decode[created](t, first), decode[created](t, again)
	if a.RunID != b.RunID {
		t.Errorf("repeat created a second run: %q then %q", a.RunID, b.RunID)
	}
	if again.Header.Get("OpenWOP-Idempotent-Replay") != "true" {
		t.Error("repeat is not marked OpenWOP-Idempotent-Replay: true")
	}
	other := send(acmeKey, "order-43")
	wantStatus(t, other, http.StatusCreated)
	if decode[created](t, other).RunID == a.RunID {
		t.Error("a different key returned the same run")
	}
	// Keys are scoped to the caller: globex's "order-42" is its own run.
	g := send(globexKey, "order-42")
	wantStatus(t, g, http.StatusCreated)
	if isolation.TenantOf(decode[created](t, g).RunID) != "globex" {
		t.Errorf("globex's run is not in globex: %s", g.Body)
	}
	page := decode[runListView](t, h.get("/runs", acmeKey))
	if len(page.Runs) != 2 {
		t.Errorf("acme has %d runs, want 2", len(page.Runs))
	}

	for name, idem := range map[string]string{
		"too long":  strings.Repeat("k", 256),
		"space":     "a b",
		"non-ASCII": "clé",
		"tab":       "a\tb",
	} {
		t.Run(name, func(t *testing.T) {
			wantError(t, send(acmeKey, idem), http.StatusBadRequest, codeIdempotencyKey)
		})
	}
	wantStatus(t, send(acmeKey, strings.Repeat("k", 255)), http.StatusCreated)
}

func TestCreateRunRefusals(t *testing.T) {
	h := newTestHost(t)
	tests := []struct {
		name, body, ctype string
		key               string
		status            int
		code, field       string
	}{
		{"unknown workflow", `{"workflowId":"nope"}`, "", acmeKey, 404, codeNotFound, ""},
		{"missing workflowId", `{"inputs":{}}`, "", acmeKey, 400, codeValidation, "workflowId"},
		{"empty workflowId", `{"workflowId":""}`, "", acmeKey, 400, codeValidation, "workflowId"},
		{"null workflowId", `{"workflowId":null}`, "", acmeKey, 400, codeValidation, "workflowId"},
		{"numeric workflowId", `{"workflowId":7}`, "", acmeKey, 400, codeValidation, "workflowId"},
		{"unknown member", `{"workflowId":"conformance-noop","extra":1}`, "", acmeKey, 400, codeValidation, "extra"},
		{"case-folded member", `{"WorkflowId":"conformance-noop"}`, "", acmeKey, 400, codeValidation, "WorkflowId"},
		{"repeated member", `{"workflowId":"conformance-noop","workflowId":"conformance-noop"}`, "", acmeKey, 400, codeValidation, "workflowId"},
		{"inputs not an object", `{"workflowId":"conformance-noop","inputs":[1]}`, "", acmeKey, 400, codeValidation, "inputs"},
		{"inputs null", `{"workflowId":"conformance-noop","inputs":null}`, "", acmeKey, 400, codeValidation, "inputs"},
		{"inputs refused by schema", `{"workflowId":"conformance-delay","inputs":{"delayMs":-1}}`, "", acmeKey, 400, codeValidation, ""},
		{"inputs with unknown property", `{"workflowId":"conformance-delay","inputs":{"sleep":1}}`, "", acmeKey, 400, codeValidation, ""},
		{"malformed JSON", `{"workflowId":`, "", acmeKey, 400, codeValidation, "body"},
		{"trailing data", `{"workflowId":"conformance-noop"} {}`, "", acmeKey, 400, codeValidation, "body"},
		{"array body", `[]`, "", acmeKey, 400, codeValidation, "body"},
		{"text/plain", `{"workflowId":"conformance-noop"}`, "text/plain", acmeKey, 415, codeUnsupportedMedia, ""},
		{"form", `workflowId=x`, "application/x-www-form-urlencoded", acmeKey, 415, codeUnsupportedMedia, ""},
		{"no credential", `{"workflowId":"conformance-noop"}`, "", "", 401, codeUnauthenticated, ""},
		{"unknown key", `{"workflowId":"conformance-noop"}`, "", "demo-initech", 401, codeUnauthenticated, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := h.do(req{Method: "POST", Path: "/runs", Key: tt.key, Body: tt.body, Type: tt.ctype})
			d := wantError(t, r, tt.status, tt.code)
			if tt.field != "" && d["field"] != tt.field {
				t.Errorf("details.field = %v, want %q", d["field"], tt.field)
			}
			if f, _ := d["field"].(string); tt.code == codeValidation && f == "" {
				t.Errorf("validation refusal names no field: %v", d)
			}
		})
	}
	// No refusal created a run.
	if page := decode[runListView](t, h.get("/runs", acmeKey)); len(page.Runs) != 0 {
		t.Errorf("refused requests created %d runs", len(page.Runs))
	}
	// A missing Content-Type on a body is refused too.
	hr, _ := http.NewRequest("POST", h.url+"/runs", strings.NewReader(`{"workflowId":"conformance-noop"}`))
	hr.Header.Set("Authorization", "Bearer "+acmeKey)
	resp, err := h.client.Do(hr)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnsupportedMediaType {
		t.Errorf("no Content-Type: status %d, want 415", resp.StatusCode)
	}
	// application/json with parameters is fine.
	ok := h.do(req{Method: "POST", Path: "/runs", Key: acmeKey, Body: `{"workflowId":"conformance-noop"}`, Type: "application/json; charset=utf-8"})
	wantStatus(t, ok, http.StatusCreated)
}

func TestBodyLimit(t *testing.T) {
	const limit = 64
	h := newTestHost(t, func(c *config) { c.MaxBodyBytes = limit })
	big := `{"workflowId":"conformance-noop","inputs":{"message":"` + strings.Repeat("x", 100) + `"}}`
	d := wantError(t, h.post("/runs", acmeKey, big), http.StatusRequestEntityTooLarge, codePayloadTooLarge)
	if d["limitBytes"] != float64(limit) {
		t.Errorf("details.limitBytes = %v, want %d", d["limitBytes"], limit)
	}
	// Without Content-Length (chunked) the reader enforces the limit.
	hr, _ := http.NewRequest("POST", h.url+"/runs", struct{ *strings.Reader }{strings.NewReader(big)})
	hr.Header.Set("Authorization", "Bearer "+acmeKey)
	hr.Header.Set("Content-Type", "application/json")
	resp, err := h.client.Do(hr)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("chunked body over the limit: %d, want 413", resp.StatusCode)
	}
	wantStatus(t, h.post("/runs", acmeKey, `{"workflowId":"conformance-noop"}`), http.StatusCreated)
}

func TestDefaultBodyLimitIsOneMiB(t *testing.T) {
	store := memstore.New()
	defer store.Close()
	h, err := newHandler(config{Store: store, Auth: newBearerKeys([]tenantKey{{"acme", acmeKey}}), BaseURL: "http://x"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		size   int
		status int
	}{{1 << 20, http.StatusNotFound}, {1<<20 + 1, http.StatusRequestEntityTooLarge}} {
		// A body of exactly size bytes: a JSON object padded with spaces.
		body := `{"workflowId":"none"}`
		body += strings.Repeat(" ", tc.size-len(body))
		rq := httptest.NewRequest("POST", "/runs", strings.NewReader(body))
		rq.Header.Set("Authorization", "Bearer "+acmeKey)
		rq.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, rq)
		if rec.Code != tc.status {
			t.Errorf("%d-byte body: status %d, want %d (%s)", tc.size, rec.Code, tc.status, rec.Body)
		}
	}
}

func TestListRuns(t *testing.T) {
	h := newTestHost(t)
	var acme []string
	for _, wf := range []string{memstore.FixtureNoop, memstore.FixtureFailure, memstore.FixtureNoop} {
		c := h.start(acmeKey, wf, "")
		h.waitStatus(acmeKey, projected(c.RunID), "completed", "failed")
		acme = append(acme, c.RunID)
	}
	g := h.start(globexKey, memstore.FixtureNoop, "")
	h.waitStatus(globexKey, projected(g.RunID), "completed")

	ids := func(v runListView) []string {
		var out []string
		for _, r := range v.Runs {
			out = append(out, r.RunID)
		}
		slices.Sort(out)
		return out
	}
	all := decode[runListView](t, h.get("/runs", acmeKey))
	want := slices.Sorted(slices.Values(acme))
	if diff := cmp.Diff(want, ids(all)); diff != "" {
		t.Errorf("acme's list (-want +got):\n%s", diff)
	}
	if gl := decode[runListView](t, h.get("/runs", globexKey)); !slices.Equal(ids(gl), []string{g.RunID}) {
		t.Errorf("globex lists %v, want only its own run", ids(gl))
	}

	// Paging: two, then the rest with no nextCursor member at all.
	p1r := h.get("/runs?limit=2", acmeKey)
	p1 := decode[runListView](t, p1r)
	if len(p1.Runs) != 2 || p1.NextCursor == "" {
		t.Fatalf("page 1 = %d runs, cursor %q", len(p1.Runs), p1.NextCursor)
	}
	p2r := h.get("/runs?limit=2&cursor="+p1.NextCursor, acmeKey)
	p2 := decode[runListView](t, p2r)
	if len(p2.Runs) != 1 || strings.Contains(string(p2r.Body), "nextCursor") {
		t.Errorf("last page = %s", p2r.Body)
	}
	if got := append(ids(p1), ids(p2)...); !cmp.Equal(slices.Sorted(slices.Values(got)), want) {
		t.Errorf("pages cover %v, want %v", got, want)
	}
	// Globex cannot continue acme's listing with acme's cursor.
	wantError(t, h.get("/runs?limit=2&cursor="+p1.NextCursor, globexKey), http.StatusBadRequest, codeValidation)

	failed := decode[runListView](t, h.get("/runs?workflowId=conformance-failure", acmeKey))
	if len(failed.Runs) != 1 || failed.Runs[0].Error == nil || failed.Runs[0].Error.Message != memstore.FixtureFailureMessage {
		t.Errorf("workflowId filter = %+v", failed.Runs)
	}
	if done := decode[runListView](t, h.get("/runs?status=completed", acmeKey)); len(done.Runs) != 2 {
		t.Errorf("status=completed lists %d runs, want 2", len(done.Runs))
	}
	if clamped := decode[runListView](t, h.get("/runs?limit=1000", acmeKey)); len(clamped.Runs) != 3 {
		t.Errorf("limit=1000 lists %d runs, want 3", len(clamped.Runs))
	}

	for _, tt := range []struct{ query, field string }{
		{"limit=0", "limit"},
		{"limit=-3", "limit"},
		{"limit=abc", "limit"},
		{"limit=1&limit=2", "limit"},
		{"status=done", "status"},
		{"cursor=not-a-cursor", "cursor"},
		{"cursor=" + strings.Repeat("a", 2049), "cursor"},
		{"workflowId=a&workflowId=b", "workflowId"},
		{"limit=%zz", "query"},
	} {
		t.Run(tt.query, func(t *testing.T) {
			d := wantError(t, h.get("/runs?"+tt.query, acmeKey), http.StatusBadRequest, codeValidation)
			if d["field"] != tt.field {
				t.Errorf("details.field = %v, want %q", d["field"], tt.field)
			}
		})
	}
	wantError(t, h.get("/runs", ""), http.StatusUnauthorized, codeUnauthenticated)
}

func TestCancelRun(t *testing.T) {
	h := newTestHost(t)
	c := h.start(acmeKey, memstore.FixtureCancellable, "")
	path := projected(c.RunID)

	wantError(t, h.post(path+"/cancel", globexKey, `{}`), http.StatusForbidden, codeTenantMismatch)
	wantError(t, h.post(path+"/cancel", acmeKey, `{"reason":"x","why":1}`), http.StatusBadRequest, codeValidation)
	wantError(t, h.post(path+"/cancel", acmeKey, `{"reason":7}`), http.StatusBadRequest, codeValidation)
	wantError(t, h.do(req{Method: "POST", Path: path + "/cancel", Key: acmeKey, Body: "stop", Type: "text/plain"}),
		http.StatusUnsupportedMediaType, codeUnsupportedMedia)
	if p := decode[poll](t, h.get(path+"/events/poll?timeout=0", acmeKey)); p.Status != "running" {
		t.Fatalf("refused cancels changed the run: %s", p.Status)
	}

	r := h.post(encoded(c.RunID)+"/cancel", acmeKey, `{"reason":"demo over"}`)
	wantStatus(t, r, http.StatusOK)
	got := decode[map[string]any](t, r)
	if len(got) != 2 || got["runId"] != c.RunID || (got["status"] != "cancelling" && got["status"] != "cancelled") {
		t.Errorf("cancel answer = %s", r.Body)
	}
	p := h.waitStatus(acmeKey, path, "cancelled")
	if !p.IsTerminal {
		t.Error("cancelled run is not terminal")
	}
	all := decode[poll](t, h.get(path+"/events/poll?timeout=0", acmeKey))
	var reasons []string
	for _, e := range all.Events {
		if e.Type == "run.cancelled" || e.Type == "wopinterop.cancel-requested" {
			reasons = append(reasons, e.Type+": "+e.str("reason"))
		}
	}
	if want := []string{"wopinterop.cancel-requested: demo over", "run.cancelled: demo over"}; !slices.Equal(reasons, want) {
		t.Errorf("cancel reasons = %v, want %v", reasons, want)
	}
	wantError(t, h.post(path+"/cancel", acmeKey, ""), http.StatusConflict, codeRunTerminal)
	if after := decode[poll](t, h.get(path+"/events/poll?timeout=0", acmeKey)); after.LastSequence != all.LastSequence {
		t.Error("cancelling a terminal run appended events")
	}

	// An empty body needs no Content-Type.
	c2 := h.start(acmeKey, memstore.FixtureCancellable, `{"delayMs":600000}`)
	wantStatus(t, h.do(req{Method: "POST", Path: projected(c2.RunID) + "/cancel", Key: acmeKey}), http.StatusOK)
	h.waitStatus(acmeKey, projected(c2.RunID), "cancelled")
}

func TestResolveInterrupt(t *testing.T) {
	h := newTestHost(t)
	c := h.start(acmeKey, memstore.FixtureApproval, "")
	path := projected(c.RunID)
	h.waitStatus(acmeKey, path, "waiting-approval")
	s := decode[snapshot](t, h.get(path, acmeKey))
	if len(s.Interrupts) != 1 {
		t.Fatalf("interrupts = %+v", s.Interrupts)
	}
	in := s.Interrupts[0]
	if in.Kind != "approval" || in.Key != "approval" || in.NodeID != "approve" || in.Message == "" ||
		!slices.Equal(in.Actions, []string{"accept", "reject"}) || isolation.TenantOf(in.InterruptID) != "acme" {
		t.Errorf("interrupt = %+v", in)
	}
	if in.ResolveURL != h.url+path+"/interrupts/"+isolation.Project(in.InterruptID) {
		t.Errorf("resolveUrl = %q", in.ResolveURL)
	}
	resolve := path + "/interrupts/" + isolation.Project(in.InterruptID)
	resolveEncoded := encoded(c.RunID) + "/interrupts/" + strings.Replace(in.InterruptID, "/", "%2F", 1)

	for _, tt := range []struct {
		name, path, key, body string
		status                int
		code                  string
	}{
		{"foreign tenant", resolve, globexKey, `{"resumeValue":{"action":"accept"}}`, 403, codeTenantMismatch},
		{"foreign tenant interrupt id", path + "/interrupts/" + isolation.Project("globex/"+strings.Repeat("A", 26)), acmeKey, `{"resumeValue":{"action":"accept"}}`, 403, codeTenantMismatch},
		{"action not offered", resolve, acmeKey, `{"resumeValue":{"action":"maybe"}}`, 400, codeValidation},
		{"missing resumeValue", resolve, acmeKey, `{}`, 400, codeValidation},
		{"null resumeValue", resolve, acmeKey, `{"resumeValue":null}`, 400, codeValidation},
		{"extra member", resolve, acmeKey, `{"resumeValue":{"action":"accept"},"outcome":"accept"}`, 400, codeValidation},
		{"empty body", resolve, acmeKey, ``, 415, codeUnsupportedMedia},
		{"unknown interrupt", path + "/interrupts/" + isolation.Project("acme/"+strings.Repeat("A", 26)), acmeKey, `{"resumeValue":{"action":"accept"}}`, 404, codeNotFound},
		{"malformed interrupt id", path + "/interrupts/xyz", acmeKey, `{"resumeValue":{"action":"accept"}}`, 400, codeValidation},
	} {
		t.Run(tt.name, func(t *testing.T) {
			wantError(t, h.post(tt.path, tt.key, tt.body), tt.status, tt.code)
		})
	}
	if p := decode[poll](t, h.get(path+"/events/poll?timeout=0", acmeKey)); p.Status != "waiting-approval" {
		t.Fatalf("refusals changed the run: %s", p.Status)
	}

	r := h.post(resolveEncoded, acmeKey, `{"resumeValue":{"action":"accept"}}`)
	wantStatus(t, r, http.StatusOK)
	if got := decode[snapshot](t, r); got.RunID != c.RunID {
		t.Errorf("resolve answered run %q", got.RunID)
	}
	wantError(t, h.post(resolve, acmeKey, `{"resumeValue":{"action":"accept"}}`), http.StatusConflict, codeAlreadyResolved)
	done := h.waitStatus(acmeKey, path, "completed")
	if done.Status != "completed" {
		t.Errorf("accepted approval ended %s", done.Status)
	}

	// reject fails the run with the fixture's safe message.
	c2 := h.start(acmeKey, memstore.FixtureApproval, "")
	h.waitStatus(acmeKey, projected(c2.RunID), "waiting-approval")
	s2 := decode[snapshot](t, h.get(projected(c2.RunID), acmeKey))
	wantStatus(t, h.post(strings.TrimPrefix(s2.Interrupts[0].ResolveURL, h.url), acmeKey, `{"resumeValue":{"action":"reject"}}`), http.StatusOK)
	h.waitStatus(acmeKey, projected(c2.RunID), "failed")
	if f := decode[snapshot](t, h.get(projected(c2.RunID), acmeKey)); f.Error == nil || f.Error.Message != memstore.FixtureRejectedMessage {
		t.Errorf("rejected run error = %+v", f.Error)
	}
}

func TestResolveByIneligibleCaller(t *testing.T) {
	h := newTestHost(t)
	err := h.store.Register("acme", memstore.WorkflowDef{
		Workflow: interop.Workflow{ID: "needs-boss", Name: "Needs the boss"},
		Run: func(ctx context.Context, rc *memstore.RunContext) (json.RawMessage, error) {
			_, err := rc.Interrupt(ctx, interop.Interrupt{
				Kind: interop.InterruptApproval, Key: "boss", Actions: []string{"accept", "reject"},
				Approvers: []string{"key:boss"},
			})
			return nil, err
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	c := h.start(acmeKey, "needs-boss", "")
	h.waitStatus(acmeKey, projected(c.RunID), "waiting-approval")
	s := decode[snapshot](t, h.get(projected(c.RunID), acmeKey))
	r := h.post(strings.TrimPrefix(s.Interrupts[0].ResolveURL, h.url), acmeKey, `{"resumeValue":{"action":"accept"}}`)
	wantError(t, r, http.StatusForbidden, codeForbidden)
}

func TestPollEvents(t *testing.T) {
	h := newTestHost(t)
	c := h.start(acmeKey, memstore.FixtureNoop, "")
	path := projected(c.RunID)
	p := h.waitStatus(acmeKey, path, "completed")
	all := decode[poll](t, h.get(path+"/events/poll", acmeKey))
	var types []string
	for i, e := range all.Events {
		types = append(types, e.Type)
		if e.Sequence != int64(i) {
			t.Errorf("event %d has sequence %d", i, e.Sequence)
		}
		if _, err := time.Parse(time.RFC3339Nano, e.Timestamp); err != nil || !strings.HasSuffix(e.Timestamp, "Z") {
			t.Errorf("event %d timestamp %q (want RFC 3339 in UTC): %v", i, e.Timestamp, err)
		}
		if e.RunID != c.RunID || e.SchemaVersion != 1 || len(e.EventID) < 16 {
			t.Errorf("event %d envelope: runId %q schemaVersion %d eventId %q", i, e.RunID, e.SchemaVersion, e.EventID)
		}
	}
	if want := []string{"run.started", "artifact.created", "run.completed"}; !slices.Equal(types, want) {
		t.Errorf("event types = %v, want %v", types, want)
	}
	if all.Events[0].str("transport") != "rest" || all.Events[0].str("workflowId") != memstore.FixtureNoop || all.Events[1].str("artifactId") != memstore.FixtureArtifactID {
		t.Errorf("run.started payload %s, artifact.created payload %s", all.Events[0].Payload, all.Events[1].Payload)
	}
	if got := string(all.Events[2].Payload); got != `{"outputs":{"ok":true}}` {
		t.Errorf("run.completed payload %s", got)
	}
	if all.RunID != c.RunID || all.LastSequence != 2 || all.Status != "completed" || !all.IsTerminal || p.LastSequence != 2 {
		t.Errorf("poll = %+v", all)
	}
	tail := decode[poll](t, h.get(encoded(c.RunID)+"/events/poll?afterSequence=1&timeout=0", acmeKey))
	if len(tail.Events) != 1 || tail.Events[0].Type != "run.completed" {
		t.Errorf("afterSequence=1 gave %+v", tail.Events)
	}
	empty := h.get(path+"/events/poll?afterSequence=2&timeout=0", acmeKey)
	if e := decode[poll](t, empty); len(e.Events) != 0 || e.LastSequence != 2 || !strings.Contains(string(empty.Body), `"events":[]`) {
		t.Errorf("nothing new = %s", empty.Body)
	}

	// A long poll waits for the next event instead of answering empty.
	d := h.start(acmeKey, memstore.FixtureDelay, `{"delayMs":150}`)
	start := time.Now()
	w := decode[poll](t, h.get(projected(d.RunID)+"/events/poll?afterSequence=0&timeout=10", acmeKey))
	if len(w.Events) == 0 || w.Events[0].Type != "run.completed" {
		t.Errorf("long poll = %+v", w)
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Errorf("long poll took %v", el)
	}

	for _, tt := range []struct{ query, field string }{
		{"timeout=61", "timeout"},
		{"timeout=-1", "timeout"},
		{"timeout=1.5", "timeout"},
		{"afterSequence=-2", "afterSequence"},
		{"afterSequence=x", "afterSequence"},
		{"afterSequence=1&afterSequence=2", "afterSequence"},
	} {
		t.Run(tt.query, func(t *testing.T) {
			dd := wantError(t, h.get(path+"/events/poll?"+tt.query, acmeKey), http.StatusBadRequest, codeValidation)
			if dd["field"] != tt.field {
				t.Errorf("details.field = %v", dd["field"])
			}
		})
	}
	wantError(t, h.get(path+"/events/poll?timeout=0", globexKey), http.StatusForbidden, codeTenantMismatch)
	wantError(t, h.get(projected("acme/"+strings.Repeat("Q", 26))+"/events/poll?timeout=0", acmeKey), http.StatusNotFound, codeNotFound)
}

func TestPollEndsWhenHostDrains(t *testing.T) {
	h := newTestHost(t)
	c := h.start(acmeKey, memstore.FixtureCancellable, "")
	h.waitStatus(acmeKey, projected(c.RunID), "running")
	done := make(chan response, 1)
	go func() { done <- h.get(projected(c.RunID)+"/events/poll?afterSequence=0&timeout=60", acmeKey) }()
	time.Sleep(50 * time.Millisecond) // let the poll start waiting
	h.drain()
	select {
	case r := <-done:
		wantStatus(t, r, http.StatusOK)
		if p := decode[poll](t, r); len(p.Events) != 0 || p.Status != "running" {
			t.Errorf("drained poll = %s", r.Body)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a long poll outlived the drain")
	}
}

func TestAgents(t *testing.T) {
	secret := bytes.Repeat([]byte{7}, 32)
	h := newTestHost(t, func(c *config) { c.RoutingSecret = secret })
	// An agent with no routed workflow gets no a2aTenant (OpenWOP RFC 0202 §B).
	if err := h.store.AddAgent("acme", interop.Agent{ID: "idle-agent", Persona: "idle", PackVersion: "0.1.0"}); err != nil {
		t.Fatal(err)
	}
	keys, err := isolation.NewRoutingKeys(secret, defaultVersion)
	if err != nil {
		t.Fatal(err)
	}
	r0, ok := keys.ForAgent(demoAgent())
	if !ok {
		t.Fatal("the demo agent routes nothing")
	}
	r1, _ := keys.ForAgent(conformanceAgent())
	r := h.get("/agents", acmeKey)
	wantStatus(t, r, http.StatusOK)
	want := `{"agents":[{"agentId":"demo-agent","persona":"demo","label":"Demo agent","packVersion":"1.0.0","description":"Runs the no-op and approval conformance fixtures.","workflows":["conformance-noop","conformance-approval"],"hasHandoffSchemas":false,"a2aTenant":"` + r0 + `"},` +
		`{"agentId":"core.conformance.agent-pack.resolver","persona":"Resolver","label":"Resolver","packName":"core.conformance.agent-pack","packVersion":"1.0.0","description":"Resolves a request by running the approval workflow the host routes to it.","workflows":["conformance-approval"],"hasHandoffSchemas":true,"a2aTenant":"` + r1 + `"},` +
		`{"agentId":"idle-agent","persona":"idle","packVersion":"0.1.0","workflows":[],"hasHandoffSchemas":false}]}` + "\n"
	if diff := cmp.Diff(want, string(r.Body)); diff != "" {
		t.Errorf("GET /agents (-want +got):\n%s", diff)
	}
	// The value is the agent's, not the tenant's: globex's demo agent has
	// the same id and so the same value, which only ever resolves among the
	// caller's own agents.
	if g := h.get("/agents", globexKey); !bytes.Contains(g.Body, []byte(`"a2aTenant":"`+r0+`"`)) {
		t.Errorf("globex inventory %s", g.Body)
	}
	// Another secret (the per-process default) gives other values.
	other := newTestHost(t)
	if o := other.get("/agents", acmeKey); bytes.Contains(o.Body, []byte(r0)) || !bytes.Contains(o.Body, []byte(`"a2aTenant":"`)) {
		t.Errorf("a random secret reproduced the value: %s", o.Body)
	}
	wantError(t, h.get("/agents", ""), http.StatusUnauthorized, codeUnauthenticated)
}

func TestUnknownRoutesAndMethods(t *testing.T) {
	h := newTestHost(t)
	id := projected("acme/" + strings.Repeat("A", 26))
	for _, tt := range []struct {
		method, path, allow string
	}{
		{"GET", "/nope", ""},
		{"GET", "/runs/acme/ABCDEFGHIJKLMNOPQRSTUVWXYZ", ""}, // an unprojected id spans two segments
		{"GET", "/runs/", ""},
		{"DELETE", id, "GET, HEAD"},
		{"PUT", "/runs", "POST, GET, HEAD"},
		{"GET", id + "/cancel", "POST"},
		{"POST", "/.well-known/openwop", "GET, HEAD"},
		{"POST", "/agents", "GET, HEAD"},
	} {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			r := h.do(req{Method: tt.method, Path: tt.path, Key: acmeKey})
			wantError(t, r, http.StatusNotFound, codeNotFound)
			if got := r.Header.Get("Allow"); got != tt.allow {
				t.Errorf("Allow = %q, want %q", got, tt.allow)
			}
		})
	}
}

func TestInternalErrorsAreScrubbed(t *testing.T) {
	h := newTestHost(t, withFaults("GetRun", "ListAgents"))
	for _, path := range []string{projected("acme/" + strings.Repeat("A", 26)), "/agents"} {
		r := h.get(path, acmeKey)
		wantError(t, r, http.StatusInternalServerError, codeInternal)
		if got := decode[errorEnvelope](t, r); got.Message != internalMessage || got.Details != nil {
			t.Errorf("500 body = %s", r.Body)
		}
		if strings.Contains(string(r.Body), "exploded") || strings.Contains(string(r.Body), "hunter2") {
			t.Errorf("500 leaks the cause: %s", r.Body)
		}
	}
	if !strings.Contains(h.logs.String(), "db exploded") {
		t.Errorf("the cause was not logged:\n%s", h.logs.String())
	}
}

func TestTraceContextReachesTheRun(t *testing.T) {
	h := newTestHost(t)
	err := h.store.Register("acme", memstore.WorkflowDef{
		Workflow: interop.Workflow{ID: "trace-echo", Name: "Echo the trace"},
		Run: func(_ context.Context, rc *memstore.RunContext) (json.RawMessage, error) {
			tc := rc.Trace()
			return json.Marshal(map[string]string{"traceparent": tc.TraceParent, "tracestate": tc.TraceState})
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	for _, tt := range []struct {
		name, traceparent, tracestate, want string
	}{
		{"valid", tp, "congo=t61rcWkgMzE", `{"traceparent":"` + tp + `","tracestate":"congo=t61rcWkgMzE"}`},
		{"bad tracestate dropped", tp, "Bad Key=1", `{"traceparent":"` + tp + `","tracestate":""}`},
		{"uppercase traceparent ignored", strings.ToUpper(tp), "congo=1", `{"traceparent":"","tracestate":""}`},
		{"zero trace id ignored", "00-00000000000000000000000000000000-00f067aa0ba902b7-01", "", `{"traceparent":"","tracestate":""}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			hdr := map[string]string{"traceparent": tt.traceparent}
			if tt.tracestate != "" {
				hdr["tracestate"] = tt.tracestate
			}
			r := h.do(req{Method: "POST", Path: "/runs", Key: acmeKey, Body: `{"workflowId":"trace-echo"}`, Headers: hdr})
			wantStatus(t, r, http.StatusCreated)
			c := decode[created](t, r)
			h.waitStatus(acmeKey, projected(c.RunID), "completed")
			if got := decode[snapshot](t, h.get(projected(c.RunID), acmeKey)); string(got.Outputs) != tt.want {
				t.Errorf("outputs = %s, want %s", got.Outputs, tt.want)
			}
		})
	}
}
