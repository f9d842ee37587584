package pushtest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/wopinterop/wopinterop/interop"
	"github.com/wopinterop/wopinterop/isolation"
	"github.com/wopinterop/wopinterop/push"
)

// unique returns a fresh id with a readable prefix, so that checks never
// collide with each other or with what a shared store already holds.
func unique(prefix string) string { return prefix + "-" + isolation.NewOpaque() }

// taskID returns a fresh tenant-bound task id.
func taskID() string { return "pushtest/" + isolation.NewOpaque() }

// created is a timestamp every database keeps exactly: UTC, whole
// microseconds.
func created() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }

// record returns a record of task with every field set.
func record(task, id string) push.Record {
	return push.Record{
		TaskID: task, ID: id,
		URL:       "https://hooks.example.com/" + id + "?q=1",
		Scheme:    "Bearer",
		SecretRef: unique("ref"),
		Subject: interop.Subject{
			Tenant: "pushtest", Workspace: "ws-1", Principal: "user:" + id, Authenticated: true,
			Scopes: []string{"tasks:read", "push:write"},
			Actor:  &interop.Subject{Tenant: "pushtest", Principal: "agent:peer", Authenticated: true, Scopes: []string{"a2a"}},
		},
		Tenant: "pushtest", Workspace: "ws-1", ContextID: unique("ctx"),
		After: 41, Created: created(),
	}
}

// diffRecord describes how got differs from want, "" when it does not.
// Empty and nil Scopes are equal; times are compared as instants.
func diffRecord(want, got push.Record) string {
	var d []string
	field := func(name string, w, g any) {
		if w != g {
			d = append(d, fmt.Sprintf("%s %v, want %v", name, g, w))
		}
	}
	field("TaskID", want.TaskID, got.TaskID)
	field("ID", want.ID, got.ID)
	field("URL", want.URL, got.URL)
	field("Scheme", want.Scheme, got.Scheme)
	field("SecretRef", want.SecretRef, got.SecretRef)
	field("Tenant", want.Tenant, got.Tenant)
	field("Workspace", want.Workspace, got.Workspace)
	field("ContextID", want.ContextID, got.ContextID)
	field("After", want.After, got.After)
	field("Done", want.Done, got.Done)
	if !want.Created.Equal(got.Created) {
		d = append(d, fmt.Sprintf("Created %v, want %v", got.Created, want.Created))
	}
	if s := diffSubject(want.Subject, got.Subject); s != "" {
		d = append(d, "Subject: "+s)
	}
	return strings.Join(d, "; ")
}

func diffSubject(want, got interop.Subject) string {
	if want.Tenant != got.Tenant || want.Workspace != got.Workspace || want.Principal != got.Principal ||
		want.Authenticated != got.Authenticated || !slices.Equal(want.Scopes, got.Scopes) ||
		(want.Actor == nil) != (got.Actor == nil) {
		return fmt.Sprintf("%+v, want %+v", got, want)
	}
	if want.Actor != nil {
		if s := diffSubject(*want.Actor, *got.Actor); s != "" {
			return "Actor " + s
		}
	}
	return ""
}

// ids returns the ids of recs, in order.
func ids(recs []push.Record) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = r.ID
	}
	return out
}

// deliveryIDs returns the ids of ds, in order.
func deliveryIDs(ds []push.Delivery) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.ID
	}
	return out
}

// waitFor calls cond until it reports true, or returns an error naming
// what did not happen when ctx ends.
func waitFor(ctx context.Context, what string, every time.Duration, cond func() (bool, error)) error {
	for {
		ok, err := cond()
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("gave up waiting for %s: %w", what, ctx.Err())
		case <-time.After(every):
		}
	}
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}
