package hostapp

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/wopinterop/wopinterop/interop/memstore"
)

// The host's handler runs in-process on any listener: build it from a
// config, then talk REST to it.
func Example() {
	store := memstore.New()
	defer store.Close()
	keys, _ := parseKeys("acme=demo-acme")
	auth := newBearerKeys(keys)
	srv := httptest.NewUnstartedServer(nil)
	base := "http://" + srv.Listener.Addr().String()
	_ = seed(store, auth.Tenants(), base)
	handler, err := newHandler(config{Store: store, Auth: auth, BaseURL: base})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer handler.Close(context.Background()) // after the server, before the store
	srv.Config.Handler = handler
	srv.Start()
	defer srv.Close()

	resp, _ := http.Get(srv.URL + "/.well-known/openwop")
	resp.Body.Close()
	fmt.Println("discovery:", resp.StatusCode, resp.Header.Get("OpenWOP-Version"))

	rq, _ := http.NewRequest("POST", srv.URL+"/runs", strings.NewReader(`{"workflowId":"conformance-noop"}`))
	rq.Header.Set("Authorization", "Bearer demo-acme")
	rq.Header.Set("Content-Type", "application/json")
	resp, _ = http.DefaultClient.Do(rq)
	resp.Body.Close()
	fmt.Println("createRun:", resp.StatusCode)

	resp, _ = http.Get(srv.URL + "/agents")
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Printf("no credential: %d %s", resp.StatusCode, body)
	// Output:
	// discovery: 200 2.0
	// createRun: 201
	// no credential: 401 {"error":"unauthenticated","message":"a valid bearer credential is required"}
}
