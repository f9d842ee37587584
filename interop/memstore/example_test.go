package memstore_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/interop/memstore"
)

func Example() {
	ctx := context.Background()
	store := memstore.New()
	defer store.Close()

	// A workflow is a Go function; its input schema is compiled once, here.
	err := store.Register("acme", memstore.WorkflowDef{
		Workflow: interop.Workflow{
			ID:          "greet",
			Name:        "Greet",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`),
		},
		Run: func(ctx context.Context, rc *memstore.RunContext) (json.RawMessage, error) {
			var in struct {
				Name string `json:"name"`
			}
			if err := json.Unmarshal(rc.Inputs(), &in); err != nil {
				return nil, err
			}
			greeting := "Hello, " + in.Name + "!"
			if err := rc.PublishArtifact(interop.Artifact{ID: "greeting", Parts: []interop.Part{interop.TextPart(greeting)}}, false, true); err != nil {
				return nil, err
			}
			return json.Marshal(map[string]string{"greeting": greeting})
		},
	})
	if err != nil {
		panic(err)
	}

	caller := interop.Subject{Tenant: "acme", Principal: "alice", Authenticated: true}
	run, created, err := store.CreateRun(ctx, caller, interop.CreateRunRequest{
		WorkflowID: "greet",
		Inputs:     json.RawMessage(`{"name":"Ada"}`),
		Transport:  interop.TransportA2A,
	})
	if err != nil {
		panic(err)
	}
	fmt.Println("created:", created)

	events, err := store.WatchRun(ctx, caller, run.ID, -1)
	if err != nil {
		panic(err)
	}
	for ev, err := range events {
		if err != nil {
			panic(err)
		}
		fmt.Println(ev.Sequence, ev.Type, ev.Status)
	}

	done, err := store.GetRun(ctx, caller, run.ID)
	if err != nil {
		panic(err)
	}
	fmt.Println(string(done.Output), done.Artifacts[0].Parts[0].Text)

	// Another tenant cannot tell the run exists.
	_, err = store.GetRun(ctx, interop.Subject{Tenant: "globex", Principal: "bob"}, run.ID)
	fmt.Println(err)

	// Output:
	// created: true
	// 0 run.started running
	// 1 artifact.created running
	// 2 run.completed completed
	// {"greeting":"Hello, Ada!"} Hello, Ada!
	// memstore: run: interop: not found
}
